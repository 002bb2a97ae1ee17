package main

// Policy (see policy_filters_test.go): tool search, and what the tools list
// costs the host's context with and without it.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// searchQuery is one recorded search and the tool it should find.
type searchQuery struct{ query, want string }

// searchQueries are natural requests over server-everything, server-filesystem,
// notes and weather, each with the tool a person would pick.
var searchQueries = []searchQuery{
	{"read a text file", "mcp__filesystem__read_text_file"},
	{"list files in a directory", "mcp__filesystem__list_directory"},
	{"weather forecast for a city", "mcp__weather__forecast"},
	{"add two numbers", "mcp__everything__get-sum"},
	{"echo a message back", "mcp__everything__echo"},
	{"search notes", "mcp__notes__search"},
	{"find weather stations in a city", "mcp__weather__search"},
	{"create a new directory", "mcp__filesystem__create_directory"},
	{"move or rename a file", "mcp__filesystem__move_file"},
	{"write content to a file", "mcp__filesystem__write_file"},
	{"get a note by its id", "mcp__notes__get_note"},
	{"add a new note", "mcp__notes__add_note"},
	{"compress a file with gzip", "mcp__everything__gzip-file-as-resource"},
	{"show the environment variables", "mcp__everything__get-env"},
	{"get a tiny image", "mcp__everything__get-tiny-image"},
	{"file size and permissions metadata", "mcp__filesystem__get_file_info"},
	{"edit lines in a text file", "mcp__filesystem__edit_file"},
	{"search for files matching a glob pattern", "mcp__filesystem__search_files"},
	{"recursive tree of a directory", "mcp__filesystem__directory_tree"},
	{"read several files at once", "mcp__filesystem__read_multiple_files"},
}

// searchServers is the catalog the search tests and figures run over.
func searchServers(t *testing.T, root string) map[string]server {
	return map[string]server{
		"everything": everythingServer(t, nil),
		"filesystem": filesystemServer(t, root),
		"notes":      notesServer(),
		"weather":    weatherServer(),
	}
}

// filesystemRoot is a directory for server-filesystem with one file in it.
func filesystemRoot(t *testing.T) (dir, file string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "hello.txt")
	if err := os.WriteFile(file, []byte("hello from the policy test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// searchFor runs search_tools and returns the names found, best first.
func searchFor(t testing.TB, ctx context.Context, trunk *rawConn, query string, limit int) ([]string, json.RawMessage) {
	t.Helper()
	res, raw := callToolResult(t, ctx, trunk, "mcp__trunk__search_tools", map[string]any{"query": query, "limit": limit})
	var found struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if res.IsError || json.Unmarshal([]byte(res.text()), &found) != nil {
		t.Fatalf("search_tools %q: %s", query, raw)
	}
	var names []string
	for _, tool := range found.Tools {
		names = append(names, getString(t, tool, "name"))
	}
	return names, raw
}

// TestToolSearch: with trunk.toolSearch the host lists only the trunk's
// tools; search_tools finds the right tool for natural queries, and
// call_tool runs it with the same result as a direct call through a trunk
// without tool search.
func TestToolSearch(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	root, file := filesystemRoot(t)
	servers := searchServers(t, root)
	search := startRawTrunkEnv(t, ctx, writeConfig(t, servers, waitingForAll(map[string]any{"toolSearch": true})))
	plain := startRawTrunkEnv(t, ctx, writeConfig(t, servers, waitingForAll(nil)))

	// On: only the trunk's own tools are listed.
	want := []string{"mcp__trunk__call_tool", "mcp__trunk__search_tools", "mcp__trunk__status", "mcp__trunk__wait_for_servers"}
	if got := sortedKeys(toolsByName(t, ctx, search)); !slices.Equal(got, want) {
		t.Errorf("tools/list with toolSearch: %q, want %q", got, want)
	}
	// Off: every tool, and no search tools.
	all := settledTools(t, ctx, plain, 20)
	for _, name := range []string{"mcp__trunk__call_tool", "mcp__trunk__search_tools"} {
		if _, ok := all[name]; ok {
			t.Errorf("%s is listed without toolSearch", name)
		}
	}
	for _, q := range searchQueries {
		if _, ok := all[q.want]; !ok {
			t.Fatalf("the expected tool %s of %q does not exist; tools: %q", q.want, q.query, sortedKeys(all))
		}
	}

	// Every query finds its tool in the top 3; the ranks are logged for
	// docs/context.md.
	var table strings.Builder
	table.WriteString("| query | expected tool | rank | top 3 |\n|---|---|---|---|\n")
	top3 := 0
	for _, q := range searchQueries {
		names, _ := searchFor(t, ctx, search, q.query, 10)
		rank := slices.Index(names, q.want) + 1
		if rank >= 1 && rank <= 3 {
			top3++
		} else {
			t.Errorf("search_tools %q: %s is at rank %d (0: not in the top 10), want top 3; got %q", q.query, q.want, rank, names)
		}
		fmt.Fprintf(&table, "| %s | `%s` | %d | %s |\n", q.query, q.want, rank, "`"+strings.Join(names[:min(3, len(names))], "`, `")+"`")
	}
	t.Logf("search ranks (%d of %d queries in the top 3):\n%s", top3, len(searchQueries), table.String())

	// The definitions search_tools returns are the ones tools/list gives
	// without tool search, and limit bounds the answer.
	names, raw := searchFor(t, ctx, search, "file", 2)
	if len(names) != 2 {
		t.Errorf("search_tools limit 2: %d tools: %s", len(names), raw)
	}
	var found struct {
		Tools []json.RawMessage `json:"tools"`
	}
	res, _ := callToolResult(t, ctx, search, "mcp__trunk__search_tools", map[string]any{"query": "read a text file"})
	if err := json.Unmarshal([]byte(res.text()), &found); err != nil || len(found.Tools) == 0 {
		t.Fatalf("search_tools: %v", err)
	}
	for _, tool := range found.Tools {
		name := getString(t, tool, "name")
		if compact(t, tool) != compact(t, all[name].raw) {
			t.Errorf("search_tools returns %s as\n%s\nbut tools/list without search lists\n%s", name, tool, all[name].raw)
		}
	}
	if r := callToolResponse(t, ctx, search, "mcp__trunk__search_tools", map[string]any{}); r.Err == nil {
		var res toolResult
		if json.Unmarshal(r.Result, &res) != nil || !res.IsError {
			t.Errorf("search_tools without a query: %s, want isError", r.Result)
		}
	}

	// call_tool runs what search found, with the result of a plain call.
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"mcp__everything__get-sum", map[string]any{"a": 2, "b": 40}},
		{"mcp__everything__echo", map[string]any{"message": "through call_tool"}},
		{"mcp__weather__forecast", map[string]any{"city": "Oslo", "days": 2}},
		{"mcp__notes__search", map[string]any{"query": "proxy"}},
		{"mcp__filesystem__read_text_file", map[string]any{"path": file}},
	} {
		_, viaSearch := callToolResult(t, ctx, search, "mcp__trunk__call_tool", map[string]any{"name": c.name, "arguments": c.args})
		_, viaPlain := callToolResult(t, ctx, plain, c.name, c.args)
		if compact(t, viaSearch) != compact(t, viaPlain) {
			t.Errorf("%s: call_tool gives\n%s\na plain call\n%s", c.name, viaSearch, viaPlain)
		}
	}
	// A tool without arguments: call_tool without "arguments" is a plain
	// tools/call without them, not one with "arguments": null.
	for _, callArgs := range []string{`{"name":"mcp__everything__get-tiny-image"}`, `{"name":"mcp__everything__get-tiny-image","arguments":null}`, `{"name":"mcp__notes__rich"}`} {
		name := getString(t, []byte(callArgs), "name")
		viaSearch := search.call(ctx, "tools/call", `{"name":"mcp__trunk__call_tool","arguments":`+callArgs+`}`)
		viaPlain := plain.call(ctx, "tools/call", map[string]any{"name": name})
		if viaSearch.Err != nil || viaPlain.Err != nil {
			t.Errorf("%s without arguments: call_tool %v, a plain call %v", name, viaSearch.Err, viaPlain.Err)
		} else if compact(t, viaSearch.Result) != compact(t, viaPlain.Result) {
			t.Errorf("%s without arguments: call_tool gives\n%s\na plain call\n%s", name, viaSearch.Result, viaPlain.Result)
		}
	}
	// call_tool refuses what is not exported, naming it.
	r := callToolResponse(t, ctx, search, "mcp__trunk__call_tool", map[string]any{"name": "mcp__notes__nope", "arguments": map[string]any{}})
	var refusal string
	if r.Err != nil {
		refusal = r.Err.Message
	} else {
		var res toolResult
		_ = json.Unmarshal(r.Result, &res)
		if !res.IsError {
			t.Errorf("call_tool of an unknown tool: %s", r.Result)
		}
		refusal = res.text()
	}
	if !strings.Contains(refusal, "mcp__notes__nope") {
		t.Errorf("call_tool of an unknown tool: %q does not name it", refusal)
	}
}

// ---- context size ----

// TestContextSizeFigures measures what the host's context pays for the
// tools list: the bytes of the tools/list result, and tokens approximated as
// ceil(bytes/4) (a rule of thumb for English and JSON with common
// tokenizers, not any model's count), for server-everything,
// server-filesystem, notes and weather, directly and through mcptrunk with
// and without toolSearch. It asserts only sanity; the table is logged for
// docs/context.md.
func TestContextSizeFigures(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 150*time.Second)
	root, _ := filesystemRoot(t)
	servers := searchServers(t, root)
	node, _, filesystem := npmServers(t)
	directs := map[string]*rawConn{
		"everything": startRawEverything(t, ctx),
		"filesystem": startRawDirect(t, ctx, "filesystem", node, filesystem, root),
		"notes":      startRawDirect(t, ctx, "notes", notesBin),
		"weather":    startRawDirect(t, ctx, "weather", weatherBin),
	}
	full := startRawTrunkEnv(t, ctx, writeConfig(t, servers, waitingForAll(nil)))
	search := startRawTrunkEnv(t, ctx, writeConfig(t, servers, waitingForAll(map[string]any{"toolSearch": true})))

	// size lists tools once (one page), after the list has settled.
	size := func(c *rawConn) (bytes, tools int) {
		settledTools(t, ctx, c, 1)
		res := c.result(ctx, "tools/list", nil)
		var r struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.NextCursor != "" {
			t.Fatalf("%s: tools/list is not one page: %v", c.name, err)
		}
		return len(res), len(r.Tools)
	}
	tokens := func(b int) int { return (b + 3) / 4 }

	var table strings.Builder
	table.WriteString("| tools/list of | tools | bytes | ≈ tokens (bytes/4) |\n|---|---:|---:|---:|\n")
	row := func(what string, b, n int) {
		fmt.Fprintf(&table, "| %s | %d | %d | %d |\n", what, n, b, tokens(b))
	}
	sumBytes, sumTools := 0, 0
	for _, name := range []string{"everything", "filesystem", "notes", "weather"} {
		b, n := size(directs[name])
		sumBytes += b
		sumTools += n
		row(name+" (directly)", b, n)
	}
	row("the four, directly, summed", sumBytes, sumTools)
	fullBytes, fullTools := size(full)
	row("mcptrunk, every tool", fullBytes, fullTools)
	searchBytes, searchTools := size(search)
	row("mcptrunk, toolSearch", searchBytes, searchTools)

	// What one search costs when the model does look for a tool.
	// The answer carries the definitions once, as JSON text.
	found, answer := callToolResult(t, ctx, search, "mcp__trunk__search_tools", map[string]any{"query": "read a text file"})
	var hits struct {
		Tools []json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal([]byte(found.text()), &hits)
	fmt.Fprintf(&table, "| one search_tools answer (default limit, %q) | %d | %d | %d |\n", "read a text file", len(hits.Tools), len(answer), tokens(len(answer)))
	t.Logf("tools/list sizes (tokens ≈ ceil(bytes/4)):\n%s\ntoolSearch saves %d bytes (≈ %d tokens, %.0f%%) of every request's context",
		table.String(), fullBytes-searchBytes, tokens(fullBytes)-tokens(searchBytes), 100*float64(fullBytes-searchBytes)/float64(fullBytes))

	if searchBytes >= fullBytes {
		t.Errorf("search mode lists %d bytes, the full list %d: it should be smaller", searchBytes, fullBytes)
	}
	if searchTools != 4 {
		t.Errorf("search mode lists %d tools, want the trunk's 4", searchTools)
	}
	if fullTools != sumTools+2 {
		t.Errorf("the full list has %d tools, the servers %d plus the trunk's 2", fullTools, sumTools)
	}
	if fullBytes < sumBytes {
		t.Errorf("the full list (%d bytes) is smaller than the servers' lists together (%d): something is missing", fullBytes, sumBytes)
	}
}
