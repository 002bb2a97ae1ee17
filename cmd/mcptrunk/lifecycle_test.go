//go:build !windows

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shutdownLimit is how long mcptrunk may take to exit once told to, with
// upstreams that exit on stdin EOF.
const shutdownLimit = 5 * time.Second

// TestShutdown: stdin EOF, SIGTERM and SIGINT each make mcptrunk exit
// promptly, with every upstream gone.
func TestShutdown(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stdin-EOF", "SIGTERM", "SIGINT"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			needProc(t)
			ctx := testCtx(t, 60*time.Second)
			cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, nil)
			c := startRawTrunk(t, ctx, cfg)
			names := keysOf(t, c.list(ctx, "tools/list", "tools"), "name")
			for _, want := range []string{"mcp__notes__echo", "mcp__weather__search"} {
				if !contains(names, want) {
					t.Fatalf("%s is not listed: %q", want, names)
				}
			}
			ups := processes(func(p procInfo) bool { return tagged(c.tag)(p) && p.exe != trunkBin })
			if len(ups) != 2 {
				t.Fatalf("want the 2 upstream processes running before shutdown, found %v", ups)
			}

			start := time.Now()
			switch how {
			case "stdin-EOF":
				c.closeStdin()
			case "SIGTERM":
				_ = c.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				_ = c.cmd.Process.Signal(syscall.SIGINT)
			}
			if !c.waitExit(shutdownLimit) {
				t.Fatalf("mcptrunk did not exit within %s of %s\nstderr:\n%s", shutdownLimit, how, tail(c.stderr.String(), 3000))
			}
			elapsed := time.Since(start)
			t.Logf("%s: mcptrunk exited after %s", how, elapsed.Round(time.Millisecond))
			if err := c.exitErr(); err != nil {
				t.Errorf("%s: mcptrunk ended with %v, want a clean exit\nstderr:\n%s", how, err, tail(c.stderr.String(), 3000))
			}
			// The trunk waits for its upstreams: none may outlive it.
			if left := processes(tagged(c.tag)); len(left) > 0 {
				t.Errorf("%s: still running after mcptrunk exited: %v", how, left)
			}
			assertNoProcesses(t, c.tag, 2*time.Second)
		})
	}
}

// TestStdoutPurity: with an upstream that floods its stderr, everything
// mcptrunk writes to stdout is JSON-RPC, one message a line, and the flood
// goes to stderr.
func TestStdoutPurity(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes": notesServer(),
		"noisy": chaosServer("-mode", "stderr-flood"),
	}, nil)
	c := startRawTrunk(t, ctx, cfg)
	for _, l := range lists {
		c.list(ctx, l.method, l.field)
	}
	for i := range 20 {
		text := strings.Repeat("é\"\\\n", i)
		res := c.result(ctx, "tools/call", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": text}})
		if !bytes.Contains(res, []byte(mustJSON(text))) {
			t.Errorf("echo %q: %s", text, res)
		}
		_ = c.call(ctx, "tools/call", map[string]any{"name": "mcp__noisy__x"})
		c.result(ctx, "resources/read", map[string]string{"uri": "mcptrunk://notes/notes://all"})
	}
	c.closeStdin()
	if !c.waitExit(15 * time.Second) {
		t.Fatalf("mcptrunk did not exit after stdin EOF")
	}
	lines := c.stdoutLines()
	if len(lines) < 60 {
		t.Errorf("only %d lines on stdout", len(lines))
	}
	for i, line := range lines {
		if !bytes.HasSuffix(line, []byte("\n")) {
			t.Errorf("stdout line %d does not end in a newline: %q", i, line)
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Errorf("stdout line %d is not JSON: %q: %v", i, tail(string(line), 200), err)
			continue
		}
		if dec.More() {
			t.Errorf("stdout line %d holds more than one JSON value: %q", i, tail(string(line), 200))
		}
		isResponse := m.ID != nil && m.Method == "" && (m.Result != nil) != (m.Error != nil)
		isMessage := m.Method != ""
		if m.JSONRPC != "2.0" || !(isResponse || isMessage) {
			t.Errorf("stdout line %d is not a JSON-RPC 2.0 message: %q", i, tail(string(line), 200))
		}
	}
	if stderr := c.stderr.String(); !strings.Contains(stderr, "noisy") {
		t.Errorf("mcptrunk's stderr never mentions the noisy server:\n%s", tail(stderr, 2000))
	}
	t.Logf("%d lines on stdout, %d bytes on stderr", len(lines), len(c.stderr.String()))
}
