package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolOverrides: with the notes server's echo renamed say, described
// anew and its text fixed, an independent client (go-sdk) lists
// mcp__notes__say with that description and no text in its schema, gets
// fixed-text back for {}, and is refused when it passes text; the lockfile
// holds echo as the server gives it, so pin --check finds no drift, and
// the trunk under enforce serves the override of what was pinned; check
// and list say what is overridden, and that "ecko" names no tool.
func TestToolOverrides(t *testing.T) {
	t.Parallel()
	notes := withFields(notesServer(), map[string]any{"overrides": map[string]any{"tools": map[string]any{"echo": map[string]any{
		"name": "say", "description": "Say it back", "arguments": map[string]any{"text": map[string]any{"fixed": "fixed-text"}},
	}, "ecko": map[string]any{"description": "a typo"}}}})
	cfg := writeConfig(t, map[string]server{"notes": notes}, map[string]any{"pin": "enforce"})
	runPin(t, 0, []string{"Recorded"}, "--config", cfg, "--yes")
	lock, _ := readLockfile(t, lockfilePath(cfg))
	var echo struct{ Name, Description string }
	if err := json.Unmarshal(lock.Servers["notes"]["tools"]["echo"].Definition, &echo); err != nil || echo.Name != "echo" || echo.Description != "Return the text argument unchanged." {
		t.Errorf("the lockfile's echo is not the server's: %+v, %v", echo, err)
	}
	runPin(t, 0, []string{"Everything matches the lockfile"}, "--config", cfg, "--check")
	for _, cmd := range []string{"check", "list"} {
		stdout, stderr, code := runCLI(t, pinRunTimeout, cmd, "--config", cfg)
		for _, want := range []string{
			`overrides: server "notes": tool "echo" is listed as "mcp__notes__say": name say, description, text fixed`,
			`overrides: warning: server "notes": overrides.tools names "ecko", which the server does not have (did you mean "echo"?)`,
		} {
			if code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("mcptrunk %s: exit %d, stdout lacks %q:\n%s\nstderr:\n%s", cmd, code, want, stdout, stderr)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := connectTrunk(t, ctx, cfg)
	var say *mcp.Tool
	for tool, err := range h.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		switch tool.Name {
		case "mcp__notes__say":
			say = tool
		case "mcp__notes__echo":
			t.Error("mcp__notes__echo is listed beside its new name")
		}
	}
	if say == nil {
		t.Fatal("mcp__notes__say is not listed")
	}
	schema, _ := json.Marshal(say.InputSchema)
	if say.Description != "Say it back" || strings.Contains(string(schema), "text") {
		t.Errorf("mcp__notes__say: description %q, schema %s", say.Description, schema)
	}
	if got := callText(t, ctx, h.ClientSession, "mcp__notes__say", nil); got != "fixed-text" {
		t.Errorf("mcp__notes__say {}: %q, want fixed-text", got)
	}
	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__say", Arguments: map[string]any{"text": "mine"}})
	if err == nil || !strings.Contains(err.Error(), `tool "mcp__notes__say": argument "text" is fixed`) {
		t.Errorf("mcp__notes__say with text: %v, %v; want a refusal naming the tool and argument", mustJSON(res), err)
	}
}
