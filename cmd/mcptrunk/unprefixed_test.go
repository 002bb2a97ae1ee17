package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestServeUnprefixed: notes and weather, both with "namespace": false,
// behind mcptrunk serve. Their tools, prompts and resources are listed and
// used by their own names and URIs and answer byte for byte as they do
// directly; the tool both call "search" stays with notes (first in name
// order), weather's is withheld, and the log, mcp__trunk__status and
// mcptrunk check say so; a URI neither lists is read from the server whose
// template it fits.
func TestServeUnprefixed(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	notesEntry, weatherEntry := notesServer(), weatherServer()
	notesEntry["namespace"], weatherEntry["namespace"] = false, false
	cfg := writeConfig(t, map[string]server{"notes": notesEntry, "weather": weatherEntry}, nil)
	trunk := startRawTrunk(t, ctx, cfg)
	notes := startRawDirect(t, ctx, "notes", notesBin)
	weather := startRawDirect(t, ctx, "weather", weatherBin)

	tools := keysOf(t, trunk.list(ctx, "tools/list", "tools"), "name")
	for _, name := range []string{"search", "get_note", "rich", "forecast", "progress", "mcp__trunk__status"} {
		if !contains(tools, name) {
			t.Errorf("tools/list has no %q: %q", name, tools)
		}
	}
	if dup := duplicates(tools); len(dup) > 0 {
		t.Errorf("tools/list lists %q more than once", dup)
	}
	for _, name := range tools {
		if strings.HasPrefix(name, "mcp__notes__") || strings.HasPrefix(name, "mcp__weather__") {
			t.Errorf("tools/list has the namespaced %q", name)
		}
	}

	// Each answer is its server's own, byte for byte: no name or URI in
	// it is rewritten (rich returns an embedded resource and a link).
	for _, c := range []struct {
		direct *rawConn
		method string
		params map[string]any
	}{
		{notes, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "roadmap"}}},
		{notes, "tools/call", map[string]any{"name": "rich", "arguments": map[string]any{}}},
		{notes, "tools/call", map[string]any{"name": "get_note", "arguments": map[string]any{"id": "1"}}},
		{weather, "tools/call", map[string]any{"name": "forecast", "arguments": map[string]any{"city": "Oslo", "days": 2}}},
		{notes, "prompts/get", map[string]any{"name": "summarize", "arguments": map[string]any{"topic": "tea", "style": "haiku"}}},
		{notes, "resources/read", map[string]any{"uri": "notes://readme"}},
		{notes, "resources/read", map[string]any{"uri": "notes://note/2"}},
		{weather, "resources/read", map[string]any{"uri": "weather://forecast/Bergen"}},
	} {
		want := c.direct.result(ctx, c.method, c.params)
		got := trunk.result(ctx, c.method, c.params)
		if compact(t, got) != compact(t, want) {
			t.Errorf("%s %s through the trunk:\n%s\ndirectly:\n%s", c.method, mustJSON(c.params), got, want)
		}
	}
	if got := trunk.result(ctx, "tools/call", map[string]any{"name": "rich", "arguments": map[string]any{}}); !strings.Contains(string(got), `"notes://note/2"`) {
		t.Errorf("rich through the trunk has no link to notes://note/2: %s", got)
	}

	// weather's search is withheld, and said to be.
	const withheld = `server "weather": tool "search" is withheld: server "notes" exports the same name`
	if _, err := waitStderrLine(ctx, trunk.stderr, 10*time.Second, `tool "search" is withheld`); err != nil {
		t.Errorf("the trunk's log does not say weather's search is withheld: %v\n%s", err, trunk.stderr)
	}
	status := trunk.result(ctx, "tools/call", map[string]any{"name": "mcp__trunk__status", "arguments": map[string]any{}})
	var report struct {
		StructuredContent struct {
			Conflicts []struct{ Server, Kind, Name, Owner string } `json:"conflicts"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(status, &report); err != nil {
		t.Fatal(err)
	}
	if c := report.StructuredContent.Conflicts; len(c) != 1 || c[0].Server != "weather" || c[0].Kind != "tool" || c[0].Name != "search" || c[0].Owner != "notes" {
		t.Errorf("mcp__trunk__status conflicts: %+v, want weather's tool search, kept by notes", c)
	}
	out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "names: "+withheld) {
		t.Errorf("mcptrunk check: exit %d, want 0 and a line saying %q:\n%s\n%s", code, withheld, out, errOut)
	}
}
