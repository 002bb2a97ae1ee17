package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// Helpers of the fault suite (faults_*_test.go, reload_test.go): the
// trunk's status as a host reads it, a background load on a healthy server,
// and the chaos server's processes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// faultHost is the go-sdk host of the fault tests: go-sdk's default
// capabilities, reading frames up to 64 MiB (room for the 20 MB result of
// the chaos server's huge tool, which go-sdk's default 16 MiB would refuse).
var faultHost = hostConfig{sdkDefaults: true, maxLine: 64 << 20}

// toolCaller is a host the loads and checks here call tools through: the
// go-sdk host or the raw one.
type toolCaller interface {
	callTool(ctx context.Context, name string, args map[string]any) (string, error)
}

// callTool calls a tool and returns its text; a JSON-RPC error, or a
// result with isError, is returned as an error.
func (h *host) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
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
func (h *host) toolNames(ctx context.Context) ([]string, error) {
	var names []string
	for tool, err := range h.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

// serverStatus is one server in mcp__trunk__status.
type serverStatus struct {
	Server   string    `json:"server"`
	State    string    `json:"state"`
	Error    string    `json:"error"`
	Since    time.Time `json:"since"`
	Restarts int64     `json:"restarts"`
	Tools    int       `json:"tools"`
}

// status calls mcp__trunk__status and indexes the servers by name.
func (h *host) status(ctx context.Context) (map[string]serverStatus, error) {
	text, err := h.callTool(ctx, "mcp__trunk__status", nil)
	if err != nil {
		return nil, err
	}
	return parseStatus(text)
}

// droppedNotifications is the trunk's count of notifications it dropped
// (a host not reading, or one too large for it), from mcp__trunk__status.
func (h *host) droppedNotifications(ctx context.Context) (int64, error) {
	text, err := h.callTool(ctx, "mcp__trunk__status", nil)
	if err != nil {
		return 0, err
	}
	var r struct {
		Dropped int64 `json:"droppedNotifications"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return 0, fmt.Errorf("mcp__trunk__status: %v: %s", err, text)
	}
	return r.Dropped, nil
}

// parseStatus reads the text of mcp__trunk__status.
func parseStatus(text string) (map[string]serverStatus, error) {
	var r struct {
		Servers []serverStatus `json:"servers"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return nil, fmt.Errorf("mcp__trunk__status: %v: %s", err, text)
	}
	out := make(map[string]serverStatus, len(r.Servers))
	for _, s := range r.Servers {
		out[s.Server] = s
	}
	return out, nil
}

// waitStatus polls mcp__trunk__status until ok accepts it, and returns the
// status it accepted and when.
func (h *host) waitStatus(ctx context.Context, within time.Duration, ok func(map[string]serverStatus) bool) (map[string]serverStatus, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last map[string]serverStatus
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

// namesServer reports whether err names server other than inside the
// exported name of the tool called.
func namesServer(err error, server, tool string) bool {
	if err == nil {
		return false
	}
	msg := strings.ReplaceAll(err.Error(), tool, "")
	return strings.Contains(msg, `"`+server+`"`) || strings.Contains(msg, server)
}

// callLoad calls a tool of a healthy server over and over in the background,
// checking each answer, and records every call.
type callLoad struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	calls []loadCall
}

type loadCall struct {
	start, end time.Time
	err        error
}

// echoLoad calls mcp__<server>__echo through h with a fresh text every
// pause.
func echoLoad(h toolCaller, ctx context.Context, server string, pause time.Duration) *callLoad {
	l := &callLoad{stop: make(chan struct{}), done: make(chan struct{})}
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
			got, err := h.callTool(callCtx, "mcp__"+server+"__echo", map[string]any{"text": want})
			cancel()
			if err == nil && got != want {
				err = fmt.Errorf("echo %q answered %q", want, got)
			}
			if err != nil && ctx.Err() != nil {
				return // the test is over
			}
			l.mu.Lock()
			l.calls = append(l.calls, loadCall{start: start, end: time.Now(), err: err})
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
func (l *callLoad) finish(t testing.TB, what string) int {
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
func (l *callLoad) okWithin(from, to time.Time) int {
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
func (l *callLoad) slowest(from, to time.Time) time.Duration {
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
func (l *callLoad) waitOKAfter(ctx context.Context, from time.Time, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return eventually(ctx, 10*time.Millisecond, func() error {
		if l.okWithin(from, time.Now()) == 0 {
			return errors.New("no call to the healthy server succeeded yet")
		}
		return nil
	})
}

// chaosStateFile returns a fresh path for a chaos server's start counter.
func chaosStateFile(t testing.TB) string {
	return filepath.Join(t.TempDir(), "chaos-starts")
}

// procsOf lists the live processes of tag running exe.
func procsOf(tag, exe string) []procInfo {
	return processes(func(p procInfo) bool { return p.env[tagEnv] == tag && p.exe == exe })
}

// roundMS rounds a duration for the logs.
func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
