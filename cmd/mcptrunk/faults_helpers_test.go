package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// Helpers of the fault suite (faults_*_test.go, reload_test.go). Every name
// starts with flt so that test files written next to these cannot collide
// with them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fltHost is the go-sdk playing the host of `mcptrunk serve`, connected over
// pipes of its own so that it can accept frames larger than the SDK's
// CommandTransport does (16 MiB), and recording what the fault tests watch:
// every tools/list_changed and every log message, by logger.
type fltHost struct {
	*mcp.ClientSession
	t      testing.TB
	cmd    *exec.Cmd
	tag    string
	stderr *syncBuffer
	exited chan struct{} // closed once the trunk has exited and was reaped

	mu          sync.Mutex
	listChanged []time.Time
	logs        map[string]int // notifications/message received, by logger
}

// fltMaxLine is the largest frame the host accepts: room for the 20 MB
// result of the chaos server's huge tool.
const fltMaxLine = 64 << 20

// fltStartHost runs `mcptrunk serve --config cfg` and connects the go-sdk to
// it. At the end of the test the session is closed (stdin EOF), the trunk
// must exit, report no race, and leave no process behind.
func fltStartHost(t testing.TB, ctx context.Context, cfg string) *fltHost {
	t.Helper()
	h := &fltHost{t: t, tag: newTag(t), stderr: &syncBuffer{}, exited: make(chan struct{}), logs: map[string]int{}}
	var stdin, stdout *os.File
	h.cmd, stdin, stdout = fltSpawn(t, h.tag, cfg, h.stderr)
	go func() {
		_ = h.cmd.Wait()
		close(h.exited)
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-faults", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			h.mu.Lock()
			h.listChanged = append(h.listChanged, time.Now())
			h.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			h.mu.Lock()
			h.logs[r.Params.Logger]++
			h.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: fltMaxLine}, nil)
	if err != nil {
		_ = stdin.Close()
		_ = stdout.Close()
		_ = h.cmd.Process.Kill()
		<-h.exited
		t.Fatalf("connecting to mcptrunk: %v\nstderr:\n%s", err, tail(h.stderr.String(), 3000))
	}
	h.ClientSession = cs
	t.Cleanup(func() {
		_ = cs.Close()
		fltReap(t, h.cmd, h.exited, h.stderr, h.tag)
	})
	return h
}

// fltSpawn starts `mcptrunk serve --config cfg`, its processes marked with
// tag and its stderr written to stderr, on pipes of the test's own (for the
// hosts here that read the trunk's stdout themselves rather than through
// CommandTransport), and returns the command with the test's ends of the
// trunk's stdin and stdout. The caller waits for the command.
func fltSpawn(t testing.TB, tag, cfg string, stderr *syncBuffer) (cmd *exec.Cmd, stdin, stdout *os.File) {
	t.Helper()
	cmd = trunkCmd(tag, "serve", "--config", cfg)
	cmd.Stderr = stderr
	childIn, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting mcptrunk: %v", err)
	}
	_ = childIn.Close()
	_ = childOut.Close()
	return cmd, stdin, stdout
}

// fltReap ends a trunk started by fltSpawn whose stdin the test has
// closed: it must exit within 15s (or is killed, failing t), report no race
// and leave no process behind. exited is closed once cmd was waited for.
func fltReap(t testing.TB, cmd *exec.Cmd, exited <-chan struct{}, stderr *syncBuffer, tag string) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Errorf("mcptrunk did not exit within 15s of stdin EOF; killing it")
		_ = cmd.Process.Kill()
		<-exited
	}
	checkNoRace(t, stderr)
	assertNoProcesses(t, tag, 5*time.Second)
}

// alive reports whether the trunk is still running.
func (h *fltHost) alive() bool {
	select {
	case <-h.exited:
		return false
	default:
		return true
	}
}

// listChangedSince counts the tools/list_changed notifications received at
// or after since.
func (h *fltHost) listChangedSince(since time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, at := range h.listChanged {
		if !at.Before(since) {
			n++
		}
	}
	return n
}

// logCount is how many notifications/message came from logger.
func (h *fltHost) logCount(logger string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs[logger]
}

// call calls a tool and returns its text; a JSON-RPC error, or a result
// with isError, is returned as an error.
func (h *fltHost) call(ctx context.Context, name string, args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	text := toolText(res)
	if res.IsError {
		return text, fmt.Errorf("tool error: %s", text)
	}
	return text, nil
}

// toolNames lists the exported tool names.
func (h *fltHost) toolNames(ctx context.Context) ([]string, error) {
	var names []string
	for tool, err := range h.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

// fltStatus is one server in mcp__trunk__status.
type fltStatus struct {
	Server   string    `json:"server"`
	State    string    `json:"state"`
	Error    string    `json:"error"`
	Since    time.Time `json:"since"`
	Restarts int64     `json:"restarts"`
	Tools    int       `json:"tools"`
}

// status calls mcp__trunk__status and indexes the servers by name.
func (h *fltHost) status(ctx context.Context) (map[string]fltStatus, error) {
	text, err := h.call(ctx, "mcp__trunk__status", nil)
	if err != nil {
		return nil, err
	}
	return fltParseStatus(text)
}

// fltParseStatus reads the text of mcp__trunk__status.
func fltParseStatus(text string) (map[string]fltStatus, error) {
	var r struct {
		Servers []fltStatus `json:"servers"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return nil, fmt.Errorf("mcp__trunk__status: %v: %s", err, text)
	}
	out := make(map[string]fltStatus, len(r.Servers))
	for _, s := range r.Servers {
		out[s.Server] = s
	}
	return out, nil
}

// waitStatus polls mcp__trunk__status until ok accepts it, and returns the
// status it accepted and when.
func (h *fltHost) waitStatus(ctx context.Context, within time.Duration, ok func(map[string]fltStatus) bool) (map[string]fltStatus, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last map[string]fltStatus
	var lastErr error
	for {
		st, err := h.status(ctx)
		if err == nil {
			last = st
			if ok(st) {
				return st, time.Now(), nil
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return last, time.Time{}, fmt.Errorf("status not reached within %s: last status %+v, last error %v", within, last, lastErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// fltNamesServer reports whether err names server other than inside the
// exported name of the tool called.
func fltNamesServer(err error, server, tool string) bool {
	if err == nil {
		return false
	}
	msg := strings.ReplaceAll(err.Error(), tool, "")
	return strings.Contains(msg, `"`+server+`"`) || strings.Contains(msg, server)
}

// fltLoad calls a tool of a healthy server over and over in the background,
// checking each answer, and records every call.
type fltLoad struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	calls []fltCall
}

type fltCall struct {
	start, end time.Time
	err        error
}

// fltEchoLoad calls mcp__<server>__echo with a fresh text every pause.
func fltEchoLoad(h *fltHost, ctx context.Context, server string, pause time.Duration) *fltLoad {
	return fltLoadOf(ctx, func(ctx context.Context, text string) (string, error) {
		return h.call(ctx, "mcp__"+server+"__echo", map[string]any{"text": text})
	}, pause)
}

// fltLineEchoLoad is fltEchoLoad for a fltLineConn.
func fltLineEchoLoad(c *fltLineConn, ctx context.Context, server string, pause time.Duration) *fltLoad {
	return fltLoadOf(ctx, func(ctx context.Context, text string) (string, error) {
		return c.callTool(ctx, "mcp__"+server+"__echo", map[string]any{"text": text})
	}, pause)
}

// fltLoadOf runs echo with a fresh text every pause.
func fltLoadOf(ctx context.Context, echo func(ctx context.Context, text string) (string, error), pause time.Duration) *fltLoad {
	l := &fltLoad{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			want := fmt.Sprintf("echo %d", i)
			start := time.Now()
			callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			got, err := echo(callCtx, want)
			cancel()
			if err == nil && got != want {
				err = fmt.Errorf("echo %q answered %q", want, got)
			}
			if err != nil && ctx.Err() != nil {
				return // the test is over
			}
			l.mu.Lock()
			l.calls = append(l.calls, fltCall{start: start, end: time.Now(), err: err})
			l.mu.Unlock()
			select {
			case <-l.stop:
				return
			case <-time.After(pause):
			}
		}
	}()
	return l
}

// finish stops the load and fails t for every call that failed. It returns
// how many calls were made.
func (l *fltLoad) finish(t testing.TB, what string) int {
	t.Helper()
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	failed := 0
	for _, c := range l.calls {
		if c.err != nil {
			failed++
			if failed <= 5 {
				t.Errorf("%s: a call to the healthy server failed at %s: %v", what, c.start.Format("15:04:05.000"), c.err)
			}
		}
	}
	if failed > 5 {
		t.Errorf("%s: %d calls to the healthy server failed in all", what, failed)
	}
	return len(l.calls)
}

// okWithin counts the calls that began and succeeded between from and to.
func (l *fltLoad) okWithin(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.calls {
		if c.err == nil && !c.start.Before(from) && !c.end.After(to) {
			n++
		}
	}
	return n
}

// slowest is the longest call that overlapped [from, to].
func (l *fltLoad) slowest(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	for _, c := range l.calls {
		if c.end.After(from) && c.start.Before(to) {
			d = max(d, c.end.Sub(c.start))
		}
	}
	return d
}

// waitOKAfter waits until a call that began at or after from succeeded.
func (l *fltLoad) waitOKAfter(ctx context.Context, from time.Time, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return eventually(ctx, 10*time.Millisecond, func() error {
		if l.okWithin(from, time.Now()) == 0 {
			return errors.New("no call to the healthy server succeeded yet")
		}
		return nil
	})
}

// fltStateFile returns a fresh path for a chaos server's start counter.
func fltStateFile(t testing.TB) string {
	return filepath.Join(t.TempDir(), "chaos-starts")
}

// fltProcs lists the live processes of tag running exe.
func fltProcs(tag, exe string) []procInfo {
	return processes(func(p procInfo) bool { return p.env[tagEnv] == tag && p.exe == exe })
}

// fltRound rounds a duration for the logs.
func fltRound(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// fltLineConn is a minimal host for results too large to decode cheaply: it
// finds each response's id in the frame's head, which the trunk always
// writes as {"jsonrpc":"2.0","id":N,...}, and hands the frame over as read.
// rawConn decodes every line, which for a 20 MB line under -race takes
// longer than the trunk takes to pass it on.
type fltLineConn struct {
	t      testing.TB
	cmd    *exec.Cmd
	tag    string
	stdin  *os.File
	stderr *syncBuffer
	exited chan struct{}
	nextID atomic.Int64

	writeMu sync.Mutex
	mu      sync.Mutex
	pending map[int64]chan []byte
}

// fltStartLineConn runs `mcptrunk serve --config cfg` and performs the
// handshake. At the end of the test it closes stdin; the trunk must exit,
// report no race and leave no process behind.
func fltStartLineConn(t testing.TB, ctx context.Context, cfg string) *fltLineConn {
	t.Helper()
	c := &fltLineConn{t: t, tag: newTag(t), stderr: &syncBuffer{}, exited: make(chan struct{}), pending: map[int64]chan []byte{}}
	var stdout *os.File
	c.cmd, c.stdin, stdout = fltSpawn(t, c.tag, cfg, c.stderr)
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer stdout.Close()
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if id, ok := fltResponseID(line); ok {
				c.mu.Lock()
				ch := c.pending[id]
				delete(c.pending, id)
				c.mu.Unlock()
				if ch != nil {
					ch <- line
				}
			}
			if err != nil {
				c.mu.Lock()
				for id, ch := range c.pending {
					close(ch)
					delete(c.pending, id)
				}
				c.mu.Unlock()
				return
			}
		}
	}()
	go func() {
		<-read
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.writeMu.Lock()
		_ = c.stdin.Close()
		c.writeMu.Unlock()
		fltReap(t, c.cmd, c.exited, c.stderr, c.tag)
	})
	if _, err := c.call(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptrunk-faults-lines","version":"0"}}`); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.writeMu.Lock()
	_, err := c.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fltResponseID reads the id of a response written by the trunk.
func fltResponseID(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexByte(rest[:min(len(rest), 24)], ',')
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return id, err == nil
}

// call sends a request (params as JSON text) and returns the whole
// response frame as read.
func (c *fltLineConn) call(ctx context.Context, method, params string) ([]byte, error) {
	id := c.nextID.Add(1)
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	c.writeMu.Lock()
	_, err := c.stdin.Write([]byte(frame))
	c.writeMu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case line, ok := <-ch:
		if !ok {
			return nil, errors.New("mcptrunk closed its stdout before answering")
		}
		return line, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// callTool calls a small tool and returns its text; errors as fltHost.call.
func (c *fltLineConn) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	line, err := c.call(ctx, "tools/call", mustJSON(map[string]any{"name": name, "arguments": args}))
	if err != nil {
		return "", err
	}
	var m struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return "", fmt.Errorf("%s: %v", name, err)
	}
	if m.Error != nil {
		return "", m.Error
	}
	var b strings.Builder
	for _, x := range m.Result.Content {
		b.WriteString(x.Text)
	}
	if m.Result.IsError {
		return b.String(), fmt.Errorf("tool error: %s", b.String())
	}
	return b.String(), nil
}
