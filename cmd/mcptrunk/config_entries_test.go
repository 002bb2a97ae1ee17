package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// unsetTokenServer is a remote server whose Authorization header needs a
// variable no test environment sets.
func unsetTokenServer() server {
	return server{"url": "https://api.example.invalid/mcp", "headers": map[string]string{"Authorization": "Bearer ${MCPTRUNK_TEST_UNSET_TOKEN}"}}
}

const unsetTokenWhy = `headers.Authorization: variable "MCPTRUNK_TEST_UNSET_TOKEN" is not set`

// TestServeWithAnUnusableEntry: one server's unset variable does not stop
// serve: initialize is answered, the other server's tools are listed and
// called, a call to the broken one names it, the field and the variable,
// and the log says so.
func TestServeWithAnUnusableEntry(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "gh": unsetTokenServer()}, nil)
	stdin, r, stderr := startPipedTrunk(t, cfg, "error")
	exchange := func(line string) map[string]any {
		t.Helper()
		return exchangeLine(t, stdin, r, stderr, line)
	}
	if m := exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v\n%s", m, stderr.String())
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	m := exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__notes__echo","arguments":{"text":"fine"}}}`)
	if res, _ := json.Marshal(m["result"]); !strings.Contains(string(res), "fine") {
		t.Errorf("a call to notes: %v", m)
	}
	m = exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__gh__search","arguments":{}}}`)
	e, _ := m["error"].(map[string]any)
	if msg, _ := e["message"].(string); !strings.Contains(msg, `"gh"`) || !strings.Contains(msg, unsetTokenWhy) {
		t.Errorf("a call to gh answered %v, want an error naming gh and %s", m, unsetTokenWhy)
	}
	if log := stderr.String(); !strings.Contains(log, "MCPTRUNK_TEST_UNSET_TOKEN") {
		t.Errorf("the log does not name the variable:\n%s", log)
	}
}

// TestCheckWithAnUnusableEntry: check names the entry that cannot be used
// and checks the other servers all the same.
func TestCheckWithAnUnusableEntry(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "gh": unsetTokenServer()}, nil)
	stdout, stderr, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	if code != 1 {
		t.Errorf("check exited %d, want 1", code)
	}
	for _, want := range []string{`server "gh": ` + unsetTokenWhy, "notes", "ready", "1 of 2 servers failed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check's output has no %q:\n%s\n%s", want, stdout, stderr)
		}
	}
}

// exchangeLine writes one line to the trunk and reads its answer.
func exchangeLine(t *testing.T, stdin io.Writer, r *bufio.Reader, stderr *syncBuffer, line string) map[string]any {
	t.Helper()
	if _, err := io.WriteString(stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
	out, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no answer to %s: %v\n%s", line, err, stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("answer to %s is not JSON: %q", line, out)
	}
	return m
}

// TestCheckShowsUnknownKeys: check names a misspelt key with its file,
// server and the key probably meant, and still passes; check --strict
// fails on it.
func TestCheckShowsUnknownKeys(t *testing.T) {
	t.Parallel()
	s := notesServer()
	s["lazzy"] = true
	cfg := writeConfig(t, map[string]server{"notes": s}, nil)
	stdout, stderr, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	want := `warning: ` + cfg + `: server "notes": unknown key "lazzy" (did you mean "lazy"?), ignored`
	if code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("check exited %d, want 0 and a line %q:\n%s\n%s", code, want, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, 60*time.Second, "check", "--strict", "--config", cfg)
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "1 config warning, which --strict fails on") {
		t.Errorf("check --strict exited %d, want 1 and the warning:\n%s\n%s", code, stdout, stderr)
	}
}

// TestUnknownToolMessages: a misspelt tool name gets the name it probably
// meant, and the error blames a filter only when the config sets one that
// leaves the tool out.
func TestUnknownToolMessages(t *testing.T) {
	t.Parallel()
	filtered := notesServer()
	filtered["tools"] = map[string][]string{"deny": {"add_note"}}
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "kept": filtered}, nil)
	stdin, r, stderr := startPipedTrunk(t, cfg, "error")
	exchangeLine(t, stdin, r, stderr, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct{ name, want, not string }{
		{"mcp__notes__serach", `unknown tool "mcp__notes__serach": server "notes" exports no such tool (did you mean "mcp__notes__search"?)`, "filter"},
		{"mcp__notse__search", `unknown tool "mcp__notse__search": no server "notse" is configured (did you mean "mcp__notes__search"?)`, "filter"},
		{"mcp__notes__frobnicate", `unknown tool "mcp__notes__frobnicate": server "notes" exports no such tool`, "did you mean"},
		{"mcp__kept__add_note", `unknown tool "mcp__kept__add_note": server "kept" has it, and its "tools" filter in the config leaves it out`, "did you mean"},
	} {
		m := exchangeLine(t, stdin, r, stderr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, i+1, tc.name))
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("%s: %q, want %q and no %q", tc.name, msg, tc.want, tc.not)
		}
	}
}
