package main

// A host on the TypeScript SDK v2 client (testdata/npm/tshost2.mjs), pinned
// to the 2026-07-28 revision, through the trunk.

import (
	"strings"
	"testing"
	"time"
)

// TestRevisionsTSHostPinned2026: a strict host that accepts only 2026-07-28
// (no fallback to initialize) connects to `mcptrunk serve`, is offered and
// negotiates 2026-07-28 through server/discover, lists the trunk's tools
// and calls a tool of each upstream (go-sdk's conformance server and
// mcptrunk-notes), including one that needs input (input_required, which
// the SDK fulfils through its elicitation handler); it also reads a
// resource and gets a prompt.
func TestRevisionsTSHostPinned2026(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	cfg := writeConfig(t, map[string]server{
		"conformance": {"command": conformanceBin(t)},
		"notes":       notesServer(),
	}, nil)
	steps := []struct {
		step map[string]any
		want string // the text (or, for a list, a name) the step must give
	}{
		{map[string]any{"list": "tools"}, "mcp__notes__echo"},
		{map[string]any{"call": "mcp__conformance__test_simple_text"}, "This is a simple text response for testing."},
		{map[string]any{"call": "mcp__notes__echo", "args": map[string]any{"text": "pinned 2026"}}, "pinned 2026"},
		{map[string]any{"call": "mcp__conformance__test_input_required_result_elicitation"}, "Hello, Ada!"},
		{map[string]any{"read": "mcptrunk://notes/notes://readme"}, "mcptrunk-notes"},
		{map[string]any{"prompt": "mcp__notes__summarize", "args": map[string]any{"topic": "revisions"}}, `"revisions"`},
	}
	var plan []map[string]any
	for _, s := range steps {
		plan = append(plan, s.step)
	}
	lines := runTSHost2(t, ctx, map[string]any{"pin": revStateless, "steps": plan},
		trunkBin, "serve", "--config", cfg, "--log-level", "error")
	if got := lines[0].ProtocolVersion; got != revStateless {
		t.Errorf("negotiated %q, want %s: %s", got, revStateless, lines[0].raw)
	}
	if len(lines) != len(steps)+1 {
		t.Fatalf("%d lines for %d steps:\n%v", len(lines), len(steps), lines)
	}
	for i, s := range steps {
		l := lines[i+1]
		switch {
		case !l.OK || l.IsError || !l.Connected:
			t.Errorf("%s: %s", l.Step, l.raw)
		case l.Names != nil:
			if !contains(l.Names, s.want) || !contains(l.Names, "mcp__conformance__test_simple_text") {
				t.Errorf("%s: %q lacks %s or the conformance server's tools", l.Step, l.Names, s.want)
			}
		case !strings.Contains(l.Text, s.want):
			t.Errorf("%s: got %q, want %q in it", l.Step, l.Text, s.want)
		}
	}
}
