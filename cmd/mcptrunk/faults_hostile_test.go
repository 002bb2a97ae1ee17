//go:build linux

package main

// The hostile server (mcptrunk-chaos's hostile tools) and hostile host lines
// through the real trunk: a line over trunk.maxMessageBytes costs the call
// it answers, never the trunk's memory nor another server's calls.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the trunk's status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM: %q", line)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// rssGrowthLimit is how much the trunk's peak RSS may grow over what it
// reached serving ordinary calls: a few times the default
// trunk.maxMessageBytes (a line collected up to the limit, the race
// detector's shadow of it), far below the lines sent (40 MiB, 64+ MiB
// without end, 256 MiB from the host), which a reader that holds a line
// would hold twice.
const rssGrowthLimit = 96 << 20

// checkRSSGrowth fails t when the peak RSS of pid grew more than
// rssGrowthLimit over base.
func checkRSSGrowth(t *testing.T, pid int, base int64) {
	t.Helper()
	peak := peakRSS(t, pid)
	if peak-base > rssGrowthLimit {
		t.Errorf("the trunk's peak RSS grew from %d MiB to %d MiB, want at most %d MiB more", base>>20, peak>>20, rssGrowthLimit>>20)
	} else {
		t.Logf("the trunk's peak RSS: %d MiB before, %d MiB after", base>>20, peak>>20)
	}
}

// TestFaultOverlongServerLine: one server answers with a line over
// trunk.maxMessageBytes, then writes one that never ends. The first call
// gets a tool error naming the server, the tool and the setting, and the
// server serves on; the second fails naming the server, which is
// restarted. The other server's calls go on throughout, and the trunk's
// peak RSS stays bounded.
func TestFaultOverlongServerLine(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes": notesServer(),
		"flaky": chaosServer("-mode", "ok", "-max-life", "80s"),
	}, nil)
	h := trunkHost(t, ctx, cfg, faultHost, "")
	if text, err := h.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
		t.Fatalf("ping_tool: %q, %v", text, err)
	}
	base := peakRSS(t, h.cmd.Process.Pid)
	load := echoLoad(h, ctx, "notes", 20*time.Millisecond)

	text, err := h.callTool(ctx, "mcp__flaky__huge", map[string]any{"bytes": 40 << 20})
	if err == nil || !strings.Contains(text, `server "flaky"`) || !strings.Contains(text, "trunk.maxMessageBytes") || !strings.Contains(text, "mcp__flaky__huge") {
		t.Errorf("a 40 MiB answer: %q, %v; want a tool error naming the server, the tool and trunk.maxMessageBytes", clip(text), err)
	}
	if text, err := h.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
		t.Errorf("the server after its over-long answer: %q, %v; want it serving on", text, err)
	}
	if _, err := waitStderrLine(ctx, h.stderr, 5*time.Second, "flaky", "over the size limit"); err != nil {
		t.Errorf("the over-long line is not in the trunk's log with the server's name: %v", err)
	}

	_, err = h.callTool(ctx, "mcp__flaky__endless_line", nil)
	if !namesServer(err, "flaky", "mcp__flaky__endless_line") || !strings.Contains(fmt.Sprint(err), "resynchronised") {
		t.Errorf("a line without end: %v; want an error naming the server and why", err)
	}
	if _, _, err := h.waitStatus(ctx, 30*time.Second, func(st map[string]serverStatus) bool {
		return st["flaky"].State == "ready" && st["flaky"].Restarts >= 1
	}); err != nil {
		t.Errorf("the server was not restarted: %v", err)
	}
	if text, err := h.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
		t.Errorf("the server after its restart: %q, %v", text, err)
	}
	if n := load.finish(t, "notes during the hostile server's lines"); n == 0 {
		t.Error("no call of the other server completed")
	}
	checkRSSGrowth(t, h.cmd.Process.Pid, base)
}

// TestFaultOverlongHostLine: a host that sends a 256 MiB request gets
// -32600 with its id, the request goes to no server, and the trunk, never
// holding the line, answers the next request.
func TestFaultOverlongHostLine(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfg := writeConfig(t, map[string]server{
		"flaky": chaosServer("-mode", "ok", "-max-life", "80s"),
	}, nil)
	c := startRawTrunk(t, ctx, cfg)
	if text, err := c.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
		t.Fatalf("ping_tool: %q, %v", text, err)
	}
	base := peakRSS(t, c.cmd.Process.Pid)
	const id = 1 << 40
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.pending[fmt.Sprint(id)] = ch
	c.mu.Unlock()
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__flaky__ping_tool","arguments":{"x":"`, id)
	c.stdinMu.Lock()
	_, err := io.Copy(c.stdin, io.MultiReader(strings.NewReader(head),
		io.LimitReader(repeatByte('x'), 256<<20), strings.NewReader(`"}}}`+"\n")))
	c.stdinMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-ch:
		if !bytes.Contains(line, []byte(`"code":-32600`)) || !bytes.Contains(line, []byte("trunk.maxMessageBytes")) {
			t.Errorf("the over-long request was answered %s, want -32600 naming trunk.maxMessageBytes", clip(string(line)))
		}
	case <-ctx.Done():
		t.Fatal("the over-long request was never answered")
	}
	if text, err := c.callTool(ctx, "mcp__flaky__ping_tool", nil); err != nil || text != "pong" {
		t.Errorf("the next call: %q, %v", text, err)
	}
	checkRSSGrowth(t, c.cmd.Process.Pid, base)
}

// repeatByte is an endless reader of b.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
