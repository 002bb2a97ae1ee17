package main

//lint:file-ignore SA1019 logging is deprecated by the 2026-07-28 revision (SEP-2577), but 2025-era hosts still ask for it, and a log flood is what the soak sends them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The soak's crowd: with the legitimate host, soakSessions sessions, the
// default most a trunk serves at once (trunk.http.maxSessions).
const (
	soakSessions  = 64
	soakListeners = 16 // go-sdk sessions at level info; the first floods and reads its call's log messages
	soakIdle      = 16 // initialize and never read nor send again
	soakSlow      = 16 // open the GET stream and read 1 KiB every 100 ms
	soakBadID     = soakSessions - 1 - soakListeners - soakIdle - soakSlow
	// soakRSSCap stops the flood early when the trunk's RSS passes it: the
	// machine is shared, and past it the figure has made its point.
	soakRSSCap = 4 << 30
)

// soakWorkload: one `serve --http` trunk in front of mcptrunk-notes and a
// flooding server (mcptrunk-chaos's log_flood: 1 MiB log messages), with
// 64 sessions at once: listeners (one of which floods, and so is sent
// every message: a server's log lines reach only the session whose call
// they belong to), idle sessions
// that never read, slow readers, and sessions that send requests with
// invalid ids or no method, while a legitimate host calls echo in a loop.
// Printed: the host's latencies (p50, p99) and errors; the trunk's peak RSS
// (sampled every 100 ms, and VmHWM) and its RSS once every session is gone
// and it has settled; the log messages sent to the sessions, how many
// arrived, and how many the trunk counted as dropped; the bad requests
// answered and not.
func (b *bench) soakWorkload(ctx context.Context) error {
	dir, err := os.MkdirTemp(b.l.dir, "soak-")
	if err != nil {
		return err
	}
	cfg := filepath.Join(dir, "soak.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{"command": b.l.notesBin},
		"flood": map[string]any{"command": b.cfg.chaosBin, "args": []string{"-mode", "ok", "-max-life", "10m"}},
	}})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return err
	}
	h, err := startHTTPTrunk(ctx, b.l.trunkBin, cfg, filepath.Join(dir, "cache"))
	if err != nil {
		return err
	}
	defer func() { _ = h.stop() }()
	pid := h.cmd.Process.Pid
	b.progress("soak: %d sessions for %s, %d log messages of %d bytes from a flooding server", soakSessions, b.cfg.soakTime, b.cfg.soakFlood, b.cfg.soakFloodBytes)

	s := &soak{url: h.url, http: &http.Client{Timeout: 10 * time.Second}}
	host, err := s.connect(ctx, func() { s.arrived.Add(1) })
	if err != nil {
		return fmt.Errorf("the host: %w%s", err, h.stderrTail())
	}
	defer host.Close()
	if _, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "warm"}}); err != nil {
		return fmt.Errorf("the host's first call: %w%s", err, h.stderrTail())
	}
	if err := s.crowd(ctx); err != nil {
		return fmt.Errorf("opening the sessions: %w%s", err, h.stderrTail())
	}
	baseKB, _ := procStatus(pid, "VmRSS")

	soakCtx, stop := context.WithTimeout(ctx, b.cfg.soakTime)
	defer stop()
	var wg sync.WaitGroup
	peakKB := s.sample(soakCtx, &wg, pid, stop)
	s.background(soakCtx, &wg)
	floodErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		floodErr <- s.flood(soakCtx, b.cfg.soakFlood, b.cfg.soakFloodBytes, b.cfg.soakTime)
	}()
	lat, hostErrs := s.hostCalls(soakCtx, host)
	wg.Wait()
	if err := <-floodErr; err != nil {
		b.progress("soak: the flood: %v", err)
	}
	hwm, _ := procStatus(pid, "VmHWM")
	// The trunk counts what a session still held for its host when the
	// session ends: read the count once the crowd has gone.
	s.close()
	dropped := s.droppedNotifications(ctx, host)
	_ = host.Close()
	settledKB := s.settle(ctx, pid)

	slices.Sort(lat)
	// A shared server's log lines reach only the session whose call
	// they belong to: the one that floods.
	sent := s.floodSent.Load()
	arrived := s.arrived.Load()
	b.add(row{workload: "soak: legitimate host's echo, p50 / p99", trunk: fmtDur(percentile(lat, 50)) + " / " + fmtDur(percentile(lat, 99)),
		note: fmt.Sprintf("%d calls, %d errors, during %s with %d other sessions (%d reading every log message, %d idle, %d reading slowly, %d sending invalid ids or no method)",
			len(lat), hostErrs, b.cfg.soakTime, soakSessions-1, soakListeners, soakIdle, soakSlow, soakBadID)})
	b.add(row{workload: "soak: trunk RSS before / peak / settled", trunk: fmtKB(baseKB["VmRSS"]) + " / " + fmtKB(max(peakKB.Load(), hwm["VmHWM"])) + " / " + fmtKB(settledKB),
		note: "peak: the largest of the 100 ms samples and VmHWM; settled: 5 s after every session was closed"})
	b.add(row{workload: "soak: log messages sent to sessions / arrived / counted dropped", trunk: fmt.Sprintf("%d / %d / %d", sent, arrived, dropped),
		note: fmt.Sprintf("sent by the server during the flooding session's calls, the only session they concern; sent - arrived = %d, of which the trunk counted %d as dropped (droppedNotifications, read after the other sessions ended, so what they still held counts); any rest was lost uncounted",
			sent-arrived, dropped)})
	b.add(row{workload: "soak: invalid requests answered / sent", trunk: fmt.Sprintf("%d / %d", s.badAnswered.Load(), s.badSent.Load()),
		note: "ids null, {} and true, and method \"\", each on its own POST with a 2 s deadline"})
	return nil
}

// soak is the crowd's state and counters.
type soak struct {
	url  string
	http *http.Client

	listeners []*mcp.ClientSession
	raw       []string // the ids of the idle, slow and bad-id sessions

	floodSent, arrived    atomic.Int64
	badSent, badAnswered  atomic.Int64
	slowIDs, badIDs, idle []string
}

// connect opens a go-sdk session at 2025-11-25; onLog counts its log
// messages when set.
func (s *soak) connect(ctx context.Context, onLog func()) (*mcp.ClientSession, error) {
	opts := clientOptions()
	if onLog != nil {
		opts.LoggingMessageHandler = func(context.Context, *mcp.LoggingMessageRequest) { onLog() }
	}
	return mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-bench-soak", Version: "0"}, opts).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// crowd opens every session but the host's.
func (s *soak) crowd(ctx context.Context) error {
	for range soakListeners {
		cs, err := s.connect(ctx, func() { s.arrived.Add(1) })
		if err != nil {
			return err
		}
		s.listeners = append(s.listeners, cs)
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			return err
		}
	}
	for i := range soakIdle + soakSlow + soakBadID {
		id, err := s.initialize(ctx, i >= soakIdle)
		if err != nil {
			return err
		}
		s.raw = append(s.raw, id)
		switch {
		case i < soakIdle:
			s.idle = append(s.idle, id)
		case i < soakIdle+soakSlow:
			s.slowIDs = append(s.slowIDs, id)
		default:
			s.badIDs = append(s.badIDs, id)
		}
	}
	return nil
}

// initialize opens a session by hand, returning its id; initialized sends
// notifications/initialized too.
func (s *soak) initialize(ctx context.Context, initialized bool) (string, error) {
	resp, err := s.post(ctx, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}`)
	if err != nil {
		return "", err
	}
	id := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if id == "" {
		return "", fmt.Errorf("initialize: HTTP %d without a session id", resp.StatusCode)
	}
	if initialized {
		if resp, err = s.post(ctx, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			return "", err
		}
		resp.Body.Close()
	}
	return id, nil
}

func (s *soak) post(ctx context.Context, session, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return s.http.Do(req)
}

// background runs the slow readers and the bad-id senders until ctx ends.
func (s *soak) background(ctx context.Context, wg *sync.WaitGroup) {
	for _, id := range s.slowIDs {
		wg.Add(1)
		go func() { defer wg.Done(); s.readSlowly(ctx, id) }()
	}
	for i, id := range s.badIDs {
		wg.Add(1)
		go func() { defer wg.Done(); s.sendBad(ctx, id, i) }()
	}
}

// readSlowly holds the session's GET stream open, reading 1 KiB every
// 100 ms, and counts the log messages it read whole.
func (s *soak) readSlowly(ctx context.Context, id string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req) // no overall timeout: a stream
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var buf [1 << 10]byte
	var seen []byte
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := resp.Body.Read(buf[:])
		seen = append(seen, buf[:n]...)
		for {
			i := bytes.Index(seen, []byte("\n\n"))
			if i < 0 {
				break
			}
			if bytes.Contains(seen[:i], []byte(`"notifications/message"`)) {
				s.arrived.Add(1)
			}
			seen = seen[i+2:]
		}
		if len(seen) > 4<<10 { // inside a large event: keep its head only
			seen = append(seen[:2<<10:2<<10], seen[len(seen)-16:]...)
		}
		if err != nil {
			return
		}
	}
}

// badBodies are requests no host should send: each must still be answered.
var badBodies = []string{
	`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":7,"method":""}`,
}

// sendBad posts badBodies in turn from the first-th, each with a 2 s
// deadline, counting the ones answered (any status but 202 within the
// deadline).
func (s *soak) sendBad(ctx context.Context, id string, first int) {
	for i := first; ctx.Err() == nil; i++ {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := s.post(rctx, id, badBodies[i%len(badBodies)])
		if ctx.Err() == nil {
			s.badSent.Add(1)
		}
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode != http.StatusAccepted && len(body) > 0 {
				s.badAnswered.Add(1)
			}
		}
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// flood has the first listener call log_flood in rounds spread over the
// soak, count messages of size bytes in all.
func (s *soak) flood(ctx context.Context, count, size int, d time.Duration) error {
	const rounds = 8
	per := max(count/rounds, 1)
	interval := d / time.Duration(2*rounds*per) // the flood takes about half the soak
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		res, err := s.listeners[0].CallTool(ctx, &mcp.CallToolParams{Name: "mcp__flood__log_flood",
			Arguments: map[string]any{"count": per, "bytes": size, "interval_ms": interval.Milliseconds()}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("log_flood: %s", resultText(res))
		}
		s.floodSent.Add(int64(per))
	}
	return nil
}

// hostCalls calls echo until ctx ends, returning each call's latency and
// how many failed.
func (s *soak) hostCalls(ctx context.Context, host *mcp.ClientSession) ([]time.Duration, int) {
	var lat []time.Duration
	errs := 0
	for i := 0; ; i++ {
		start := time.Now()
		res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": fmt.Sprint("soak ", i)}})
		if ctx.Err() != nil {
			return lat, errs
		}
		if err != nil || res.IsError {
			errs++
			continue
		}
		lat = append(lat, time.Since(start))
	}
}

// sample reads the trunk's RSS every 100 ms until ctx ends, keeping the
// largest; past soakRSSCap it calls stop.
func (s *soak) sample(ctx context.Context, wg *sync.WaitGroup, pid int, stop func()) *atomic.Int64 {
	var peak atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if m, err := procStatus(pid, "VmRSS"); err == nil {
				peak.Store(max(peak.Load(), m["VmRSS"]))
				if m["VmRSS"] > soakRSSCap>>10 {
					stop()
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return &peak
}

// droppedNotifications is the trunk's own count (mcp__trunk__status).
func (s *soak) droppedNotifications(ctx context.Context, host *mcp.ClientSession) int64 {
	res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__trunk__status"})
	if err != nil {
		return -1
	}
	var st struct {
		Dropped int64 `json:"droppedNotifications"`
	}
	if json.Unmarshal([]byte(resultText(res)), &st) != nil {
		return -1
	}
	return st.Dropped
}

// close ends every session of the crowd (DELETE for the raw ones).
func (s *soak) close() {
	for _, cs := range s.listeners {
		_ = cs.Close()
	}
	for _, id := range s.raw {
		req, err := http.NewRequest(http.MethodDelete, s.url, nil)
		if err != nil {
			continue
		}
		req.Header.Set("Mcp-Session-Id", id)
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// settle waits 5 s for the trunk to return what the crowd cost, and
// reads its RSS.
func (s *soak) settle(ctx context.Context, pid int) int64 {
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
	}
	m, _ := procStatus(pid, "VmRSS")
	return m["VmRSS"]
}
