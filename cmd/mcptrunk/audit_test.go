package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The audit log end to end: `mcptrunk serve` with trunk.audit writes one
// line per tool call, tool error, refused call and failed read, each with
// the host, the revision and the outcome, arguments redacted; lists and
// the handshake are not audited. The file is relative to the config. A
// server's own -32602 (notes at 2026-07-28 answers a missing resource
// with it) is an error, not a call the trunk refused.
func TestAuditLog(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": pin2025(notesServer()), "notes26": pinStateless(notesServer())},
		map[string]any{"audit": map[string]any{"file": "logs/audit.jsonl", "arguments": true}})
	path := filepath.Join(filepath.Dir(cfg), "logs", "audit.jsonl")
	c := startRawTrunk(t, ctx, cfg)
	c.list(ctx, "tools/list", "tools")

	c.result(ctx, "tools/call", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "hello", "apiKey": "AK-e2e-secret"}})
	if res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__notes__get_note", "arguments": map[string]any{"id": "999"}}); !strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("get_note of a missing note: %s", res)
	}
	if r := c.call(ctx, "tools/call", map[string]any{"name": "mcp__nowhere__x"}); r.Err == nil {
		t.Fatalf("a tool of no server answered %s", r.Result)
	}
	if r := c.call(ctx, "resources/read", map[string]any{"uri": "mcptrunk://notes/notes://missing"}); r.Err == nil {
		t.Fatalf("a missing resource was read: %s", r.Result)
	}
	if r := c.call(ctx, "resources/read", map[string]any{"uri": "mcptrunk://notes26/notes://missing"}); r.Err == nil || r.Err.Code != -32602 {
		t.Fatalf("a missing resource at 2026-07-28: %s %+v, want the server's -32602", r.Result, r.Err)
	}

	var lines []map[string]any
	if !waitFor(ctx, 20*time.Second, func() bool {
		lines = auditLines(t, path)
		return len(lines) >= 5
	}) {
		t.Fatalf("audit lines: %v\nstderr:\n%s", lines, tail(c.stderr.String(), 3000))
	}
	want := []struct {
		method, server, item, outcome string
	}{
		{"tools/call", "notes", "mcp__notes__echo", "ok"},
		{"tools/call", "notes", "mcp__notes__get_note", "tool_error"},
		{"tools/call", "nowhere", "mcp__nowhere__x", "refused"},
		{"resources/read", "notes", "mcptrunk://notes/notes://missing", "error"},     // the server's -32002
		{"resources/read", "notes26", "mcptrunk://notes26/notes://missing", "error"}, // the server's -32602
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		if l["method"] != w.method || l["server"] != w.server || l["item"] != w.item || l["outcome"] != w.outcome {
			t.Errorf("line %d: %v; want %s %s %s %s", i, l, w.method, w.server, w.item, w.outcome)
		}
		if l["session"] != "stdio" || l["client"] != "mcptrunk-e2e-raw" || l["revision"] != "2025-11-25" {
			t.Errorf("line %d: session, client, revision: %v", i, l)
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(l["time"])); err != nil {
			t.Errorf("line %d: time: %v", i, err)
		}
		if d, ok := l["durationMs"].(float64); !ok || d < 0 {
			t.Errorf("line %d: durationMs %v", i, l["durationMs"])
		}
		if in, ok := l["bytesIn"].(float64); !ok || in <= 0 {
			t.Errorf("line %d: bytesIn %v", i, l["bytesIn"])
		}
	}
	if out, _ := lines[0]["bytesOut"].(float64); out <= 0 {
		t.Errorf("a result of 0 bytes: %v", lines[0])
	}
	if got := mustJSON(lines[0]["arguments"]); got != `{"apiKey":"[redacted]","text":"hello"}` {
		t.Errorf("arguments %s", got)
	}
	if lines[2]["code"] != -32602.0 || !strings.Contains(fmt.Sprint(lines[2]["error"]), "no server \"nowhere\"") {
		t.Errorf("the refused line: %v", lines[2])
	}
	if lines[3]["code"] != -32002.0 {
		t.Errorf("the failed read: %v", lines[3])
	}
	if lines[4]["code"] != -32602.0 {
		t.Errorf("the read the server refused: %v", lines[4])
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("AK-e2e-secret")) || strings.Contains(c.stderr.String(), "AK-e2e-secret") {
		t.Errorf("the secret argument was written out:\n%s", data)
	}
	if st, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		t.Errorf("audit file mode %v", st.Mode().Perm())
	}
}

// An audit file that cannot be written costs the host nothing: calls
// succeed, and the trunk's log says why lines are dropped.
func TestAuditLogUnwritable(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	dir := t.TempDir() // a directory where the file should be
	cfg := writeConfig(t, map[string]server{"notes": notesServer()},
		map[string]any{"audit": map[string]any{"file": dir}})
	c := startRawTrunk(t, ctx, cfg)
	for range 3 {
		if res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "still here"}}); !strings.Contains(string(res), "still here") {
			t.Fatalf("echo through an unwritable audit log: %s", res)
		}
	}
	if _, err := waitStderrLine(ctx, c.stderr, 20*time.Second, "audit lines dropped"); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, tail(c.stderr.String(), 3000))
	}
}

// auditLines reads the audit file's complete lines; none before it exists.
func auditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break // being written
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
