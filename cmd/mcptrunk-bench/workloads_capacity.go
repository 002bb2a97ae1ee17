package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpproto "github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
)

// capacityWorkload: what one `serve --http` replica takes, for the
// capacity table of docs/deploy.md. Against mcptrunk-notes: 2025-11-25
// sessions opened and closed per second (initialize, initialized, DELETE,
// 8 at once); the memory an idle session holds (RSS with
// -capacity-sessions open, less RSS before, per session); stateless
// 2026-07-28 calls of echo per second with 16 in flight, and one at a
// time (p50), with no trunk.limits, with a rule counted in memory, and
// with the same rule counted in Redis (trunk.state at -redis): the
// latency a limit check adds, and the scripts each call runs in Redis
// (INFO commandstats, so the Redis should serve nothing else meanwhile).
func (b *bench) capacityWorkload(ctx context.Context) error {
	if b.cfg.redisURL == "" {
		return errors.New("the capacity workload needs -redis URL, a Redis of its own: redis-server --port 6390 --save '' & mcptrunk-bench -only capacity -redis redis://127.0.0.1:6390/0")
	}
	dir, err := os.MkdirTemp(b.l.dir, "capacity-")
	if err != nil {
		return err
	}
	keyFile := filepath.Join(dir, "state.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		return err
	}
	n := b.cfg.capacitySessions
	httpLimits := map[string]any{"maxSessions": n + 64, "maxSessionsPerClient": n + 64, "maxConnections": 4 * n, "maxConnectionsPerClient": 4 * n}
	rule := map[string]any{"echo": map[string]any{"server": "notes", "tool": "echo", "requests": 1_000_000_000, "window": "24h"}}
	settings := []struct {
		name  string
		trunk map[string]any
	}{
		{"no limits", map[string]any{"http": httpLimits}},
		{"limit in memory", map[string]any{"http": httpLimits, "limits": rule}},
		{"limit in Redis", map[string]any{"http": httpLimits, "limits": rule, "state": redisState(b.cfg.redisURL, keyFile)}},
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	rc, err := redisconn.ParseURL(b.cfg.redisURL)
	if err != nil {
		return fmt.Errorf("-redis: %w", err)
	}
	store := redisconn.New(rc)
	defer store.Close()

	// Every setting's trunk runs from the start; rounds take them in turn,
	// because a small shared machine drifts.
	clients := make([]*capacity, len(settings))
	for i, s := range settings {
		cfg := filepath.Join(dir, fmt.Sprintf("capacity-%d.json", i))
		data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"notes": map[string]any{"command": b.l.notesBin}}, "trunk": s.trunk})
		if err := os.WriteFile(cfg, data, 0o600); err != nil {
			return err
		}
		h, err := startHTTPTrunk(ctx, b.l.trunkBin, cfg, filepath.Join(dir, "cache"))
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		defer func() { _ = h.stop() }()
		clients[i] = &capacity{name: s.name, url: h.url, client: client, trunk: h}
		for range 200 { // warm up: connections, the stateless goroutines kept
			if err := clients[i].call(ctx); err != nil {
				return fmt.Errorf("%s: %w%s", s.name, err, h.stderrTail())
			}
		}
	}
	b.progress("capacity: sessions, on the trunk with %s", settings[0].name)
	if err := b.sessionCapacity(ctx, clients[0], clients[0].trunk.cmd.Process.Pid, n); err != nil {
		return err
	}
	const rounds, seqCalls = 3, 1000
	lat := make([][]time.Duration, len(settings))
	rates := make([][]float64, len(settings))
	calls := make([]int, len(settings))
	scripts := make([]int64, len(settings))
	for r := range rounds {
		for k := range settings {
			i := (k + r) % len(settings)
			c := clients[i]
			b.progress("capacity: round %d of %d, %s", r+1, rounds, c.name)
			before, err := evalCalls(ctx, store)
			if err != nil {
				return err
			}
			for range seqCalls {
				t0 := time.Now()
				if err := c.call(ctx); err != nil {
					return fmt.Errorf("%s: %w%s", c.name, err, c.trunk.stderrTail())
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
			rate, made, err := c.inFlight(ctx, 16, b.cfg.capacityTime)
			if err != nil {
				return fmt.Errorf("%s: %w%s", c.name, err, c.trunk.stderrTail())
			}
			after, err := evalCalls(ctx, store)
			if err != nil {
				return err
			}
			rates[i] = append(rates[i], rate)
			calls[i] += seqCalls + made
			scripts[i] += after - before
		}
	}
	for i := range settings {
		slices.Sort(lat[i])
	}
	for i, s := range settings {
		note := fmt.Sprintf("median of %d rounds of %s (%d calls in all); one at a time: p50 %s, p99 %s", rounds, b.cfg.capacityTime,
			calls[i], fmtDur(percentile(lat[i], 50)), fmtDur(percentile(lat[i], 99)))
		if i > 0 {
			note += ", " + fmtDelta(percentile(lat[i], 50)-percentile(lat[0], 50)) + " over no limits"
		}
		note += fmt.Sprintf("; Redis scripts run per call: %.2f", float64(scripts[i])/float64(calls[i]))
		b.add(row{workload: "capacity: stateless echo, 16 in flight, " + s.name, trunk: fmtRate(median(rates[i])), note: note})
	}
	return nil
}

// redisState is trunk.state with the counts in Redis at url, sealed with
// the key in keyFile.
func redisState(url, keyFile string) map[string]any {
	return map[string]any{"url": url, "keyFile": keyFile}
}

// evalCalls is how many scripts Redis has run (EVALSHA and EVAL).
func evalCalls(ctx context.Context, c *redisconn.Client) (int64, error) {
	b, err := redisconn.Bytes(c.Do(ctx, "INFO", "commandstats"))
	info := string(b)
	if err != nil {
		return 0, fmt.Errorf("reading Redis's commandstats: %w", err)
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:calls=") && !strings.HasPrefix(line, "cmdstat_eval:calls=") {
			continue
		}
		v := line[strings.Index(line, "=")+1:]
		if i := strings.IndexByte(v, ','); i >= 0 {
			v = v[:i]
		}
		k, _ := strconv.ParseInt(v, 10, 64)
		n += k
	}
	return n, nil
}

// sessionCapacity measures the sessions one replica opens per second and
// what an idle one holds.
func (b *bench) sessionCapacity(ctx context.Context, c *capacity, pid, n int) error {
	var opened atomic.Int64
	runCtx, stop := context.WithTimeout(ctx, b.cfg.capacityTime)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	began := time.Now()
	for w := range 8 {
		wg.Go(func() {
			for runCtx.Err() == nil {
				id, err := c.initialize(runCtx)
				if err == nil {
					err = c.end(runCtx, id)
				}
				if err != nil {
					if runCtx.Err() == nil {
						errs[w] = err
					}
					return
				}
				opened.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("opening sessions: %w", err)
	}
	b.add(row{workload: "capacity: 2025-11-25 sessions opened and closed per second", trunk: fmt.Sprintf("%.0f sessions/s", float64(opened.Load())/took.Seconds()),
		note: fmt.Sprintf("initialize, notifications/initialized and DELETE, 8 clients at once for %s: %d sessions", b.cfg.capacityTime, opened.Load())})

	before, err := procStatus(pid, "VmRSS")
	if err != nil {
		return err
	}
	ids := make([]string, 0, n)
	defer func() {
		for _, id := range ids {
			_ = c.end(ctx, id)
		}
	}()
	for range n {
		id, err := c.initialize(ctx)
		if err != nil {
			return fmt.Errorf("opening %d idle sessions, after %d: %w", n, len(ids), err)
		}
		ids = append(ids, id)
	}
	after, err := procStatus(pid, "VmRSS")
	if err != nil {
		return err
	}
	per := float64(after["VmRSS"]-before["VmRSS"]) / float64(n)
	b.add(row{workload: "capacity: memory per idle 2025-11-25 session", trunk: fmt.Sprintf("%.1f KiB", per),
		note: fmt.Sprintf("RSS %s with %d sessions open, %s before them", fmtKB(after["VmRSS"]), n, fmtKB(before["VmRSS"]))})
	return nil
}

// capacity is a client of one replica's endpoint.
type capacity struct {
	name   string // the setting the replica runs
	url    string
	client *http.Client
	trunk  *httpTrunk
}

// statelessEcho is a 2026-07-28 call of notes' echo.
var statelessEcho = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__notes__echo","arguments":{"text":"hi"},"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"` + mcpproto.Stateless + `","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"mcptrunk-bench","version":"0"}}}}`

// call makes one stateless echo call and checks its answer.
func (c *capacity) call(ctx context.Context) error {
	body, status, _, err := c.post(ctx, statelessEcho, map[string]string{
		mcpproto.HeaderProtocolVersion: mcpproto.Stateless, mcpproto.HeaderMethod: "tools/call", mcpproto.HeaderName: "mcp__notes__echo"})
	if err == nil && (status != http.StatusOK || !strings.Contains(body, `"hi"`) || strings.Contains(body, `"isError":true`)) {
		err = fmt.Errorf("stateless echo: HTTP %d %s", status, truncate(body, 300))
	}
	return err
}

// inFlight makes calls with k in flight for d and returns the calls per
// second and how many were made.
func (c *capacity) inFlight(ctx context.Context, k int, d time.Duration) (float64, int, error) {
	runCtx, stop := context.WithTimeout(ctx, d)
	defer stop()
	var done atomic.Int64
	errs := make([]error, k)
	var wg sync.WaitGroup
	began := time.Now()
	for w := range k {
		wg.Go(func() {
			for runCtx.Err() == nil {
				if err := c.call(runCtx); err != nil {
					if runCtx.Err() == nil {
						errs[w] = err
					}
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(began).Seconds(), int(done.Load()), errors.Join(errs...)
}

// initialize opens a 2025-11-25 session (initialize, then initialized)
// and returns its id.
func (c *capacity) initialize(ctx context.Context) (string, error) {
	_, status, id, err := c.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptrunk-bench","version":"0"}}}`, nil)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK || id == "" {
		return "", fmt.Errorf("initialize: HTTP %d, session %q", status, id)
	}
	_, status, _, err = c.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{mcpproto.HeaderSessionID: id, mcpproto.HeaderProtocolVersion: "2025-11-25"})
	if err == nil && status != http.StatusAccepted {
		err = fmt.Errorf("notifications/initialized: HTTP %d", status)
	}
	return id, err
}

// end closes session id (DELETE).
func (c *capacity) end(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set(mcpproto.HeaderSessionID, id)
	req.Header.Set(mcpproto.HeaderProtocolVersion, "2025-11-25")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("DELETE: HTTP %d", resp.StatusCode)
	}
	return nil
}

// post sends body with headers and returns the answer's body, status and
// Mcp-Session-Id.
func (c *capacity) post(ctx context.Context, body string, headers map[string]string) (string, int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return "", 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", 0, "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return string(out), resp.StatusCode, resp.Header.Get(mcpproto.HeaderSessionID), err
}
