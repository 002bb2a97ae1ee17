package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestBadHostInput: what a host sends that is not a valid request is
// answered, over the real stdio of the trunk binary, with the code JSON-RPC
// gives it and a message naming what is wrong; nothing reaches an upstream,
// and the request that follows is answered as usual.
func TestBadHostInput(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"maxMessageBytes": 1 << 20})
	stdin, r, stderr := startPipedTrunk(t, cfg, "error")
	exchange := func(line string) map[string]any {
		t.Helper()
		return exchangeLine(t, stdin, r, stderr, line)
	}
	exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bad","version":"0"}}}`)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line string
		id   any
		code float64
		msg  string
	}{
		{`this is not json`, nil, -32700, "not valid JSON"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, -32600, "batches"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, nil, -32600, "id must be a string or a number"},
		{`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`, 2.0, -32601, `"no/such/method"`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}}`, 3.0, -32602, "params.name must be a string"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp__notes__echo","arguments":"x"}}`, 4.0, -32602, "params.arguments must be an object"},
		{`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{}}`, 5.0, -32602, "params.uri is missing"},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[]}`, 6.0, -32602, "params must be an object"},
	} {
		m := exchange(tc.line)
		e, _ := m["error"].(map[string]any)
		if m["id"] != tc.id || e == nil || e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.msg) {
			t.Errorf("%s\n  answered %v\n  want id %v, code %v, a message containing %q", tc.line, m, tc.id, tc.code, tc.msg)
		}
	}
	m := exchange(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__notes__echo","arguments":{"text":"fine"}}}`)
	if res, _ := json.Marshal(m["result"]); !strings.Contains(string(res), "fine") {
		t.Errorf("the good request after the bad ones: %v", m)
	}
}

// TestCheckShowsMessageLimit: mcptrunk check says which message limit is in
// force, the default or the config's.
func TestCheckShowsMessageLimit(t *testing.T) {
	t.Parallel()
	for want, trunk := range map[string]map[string]any{
		"trunk.maxMessageBytes: 10420224": nil,
		"trunk.maxMessageBytes: 2000000":  {"maxResultBytes": 2_000_000},
	} {
		cfg := writeConfig(t, map[string]server{"notes": notesServer()}, trunk)
		stdout, stderr, code := runCLI(t, 30*time.Second, "check", "--config", cfg)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("check (trunk %v) exited %d, want a line %q:\n%s\n%s", trunk, code, want, stdout, stderr)
		}
	}
}

// startPipedTrunk runs `mcptrunk serve` on bare pipes, for tests that write
// and read the host's side of stdio themselves, byte for byte, at their own
// pace (or not at all). The trunk is stopped when the test ends.
func startPipedTrunk(t *testing.T, cfg, logLevel string) (io.Writer, *bufio.Reader, *syncBuffer) {
	t.Helper()
	cmd := trunkCmd(newTag(t), "serve", "--config", cfg, "--log-level", logLevel)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		checkNoRace(t, stderr)
	})
	return stdin, bufio.NewReaderSize(stdout, 1<<16), stderr
}
