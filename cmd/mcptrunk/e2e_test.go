package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The four lists, their result field and the member that identifies an item.
var lists = []struct{ method, field, key string }{
	{"tools/list", "tools", "name"},
	{"prompts/list", "prompts", "name"},
	{"resources/list", "resources", "uri"},
	{"resources/templates/list", "resourceTemplates", "uriTemplate"},
}

// exported is the name or URI an upstream item gets through the trunk.
func exported(server, key, raw string) string {
	if key == "name" {
		return "mcp__" + server + "__" + raw
	}
	return "mcptrunk://" + server + "/" + raw
}

// rawCatalog is the four lists of one connection, raw, indexed like lists.
type rawCatalog [4][]json.RawMessage

func listRaw(t *testing.T, ctx context.Context, c *rawConn) rawCatalog {
	t.Helper()
	var cat rawCatalog
	for i, l := range lists {
		cat[i] = c.list(ctx, l.method, l.field)
	}
	return cat
}

// TestListEverything: every tool, prompt, resource and template of each
// upstream appears under its namespace and nothing else does; each list is
// sorted by exported name; two separate runs list the same bytes; and the
// SDK host sees the same names as the raw client.
func TestListEverything(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes":   notesServer(),
		"weather": weatherServer(),
		"jotter":  notesServer(), // a second copy of notes under another name
	}, nil)

	// What the upstreams list when asked directly.
	direct := map[string]rawCatalog{}
	notes := startRawDirect(t, ctx, "notes", notesBin)
	weather := startRawDirect(t, ctx, "weather", weatherBin)
	direct["notes"] = listRaw(t, ctx, notes)
	direct["jotter"] = direct["notes"]
	direct["weather"] = listRaw(t, ctx, weather)
	for server, cat := range direct {
		if server == "jotter" {
			continue
		}
		for i, l := range lists {
			if len(cat[i]) == 0 {
				t.Errorf("%s lists no %s directly; the example servers are meant to offer every kind", server, l.field)
			}
		}
	}

	// Two separate runs of the trunk.
	runA := startRawTrunk(t, ctx, cfg)
	runB := startRawTrunk(t, ctx, cfg)
	catA, catB := listRaw(t, ctx, runA), listRaw(t, ctx, runB)

	for i, l := range lists {
		through := catA[i]
		if a, b := compactAll(t, catA[i]), compactAll(t, catB[i]); a != b {
			t.Errorf("%s differs between two runs:\nrun 1: %s\nrun 2: %s", l.method, a, b)
		}
		keys := keysOf(t, through, l.key)
		if !sort.StringsAreSorted(keys) {
			t.Errorf("%s is not sorted by %s: %q", l.method, l.key, keys)
		}
		if dup := duplicates(keys); len(dup) > 0 {
			t.Errorf("%s lists %q more than once", l.method, dup)
		}
		want := 0
		for _, server := range []string{"notes", "weather", "jotter"} {
			for _, item := range direct[server][i] {
				raw := getString(t, item, l.key)
				name := exported(server, l.key, raw)
				got := findItem(t, through, l.key, name)
				if got == nil {
					t.Errorf("%s: %s's %q is missing as %q; the trunk lists %q", l.method, server, raw, name, keys)
					continue
				}
				want++
				sameExceptField(t, fmt.Sprintf("%s %s", l.method, name), item, got, l.key, raw, name)
			}
		}
		// Apart from the trunk's own items (server "trunk", which no
		// configured server may be called), nothing else is listed.
		own := 0
		for _, k := range keys {
			if strings.HasPrefix(k, "mcp__trunk__") || strings.HasPrefix(k, "mcptrunk://trunk/") {
				own++
			}
		}
		if len(through)-own != want {
			t.Errorf("%s: the trunk lists %d items (%d its own), the upstreams %d: %q", l.method, len(through), own, want, keys)
		}
		t.Logf("%s: %d items", l.method, len(through))
	}

	// The SDK host sees the same catalog (it drops tools it finds invalid,
	// so this also checks that every re-exported tool is valid).
	s := connectTrunk(t, ctx, cfg)
	sdk := listAll(t, ctx, s.ClientSession)
	for i, names := range [][]string{sdk.toolNames(), sdk.promptNames(), sdk.resourceURIs(), sdk.templateURIs()} {
		if want := keysOf(t, catA[i], lists[i].key); !slices.Equal(names, want) {
			t.Errorf("%s through the SDK: %q, raw: %q", lists[i].method, names, want)
		}
	}
}

// TestRouting: the same raw name on two servers reaches each server, prompt
// arguments arrive, and resources (static and template-expanded) are read
// from their owner with namespaced URIs in the contents.
func TestRouting(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, nil)
	// The direct sessions are raw clients at 2025-11-25, and results are
	// compared byte for byte: the host is pinned to the same revision (at
	// 2026-07-28 its results would carry resultType and cache hints).
	s := trunkHost(t, ctx, cfg, hostConfig{sdkDefaults: true}, rev2025)
	notes := startRawDirect(t, ctx, "notes", notesBin)
	weather := startRawDirect(t, ctx, "weather", weatherBin)

	// search on both: each answer is that server's own.
	notesArgs := map[string]any{"query": "roadmap"}
	weatherArgs := map[string]any{"city": "os"}
	gotNotes := callTool(t, ctx, s, "mcp__notes__search", notesArgs)
	gotWeather := callTool(t, ctx, s, "mcp__weather__search", weatherArgs)
	wantNotes := notes.result(ctx, "tools/call", map[string]any{"name": "search", "arguments": notesArgs})
	wantWeather := weather.result(ctx, "tools/call", map[string]any{"name": "search", "arguments": weatherArgs})
	if compact(t, gotNotes) != compact(t, wantNotes) {
		t.Errorf("mcp__notes__search through the trunk:\n%s\nnotes directly:\n%s", gotNotes, wantNotes)
	}
	if compact(t, gotWeather) != compact(t, wantWeather) {
		t.Errorf("mcp__weather__search through the trunk:\n%s\nweather directly:\n%s", gotWeather, wantWeather)
	}
	if compact(t, gotNotes) == compact(t, gotWeather) {
		t.Errorf("both searches gave the same answer: %s", gotNotes)
	}
	if !strings.Contains(string(gotNotes), "Meeting notes") {
		t.Errorf("mcp__notes__search roadmap: %s, want the seeded note 2 (Meeting notes)", gotNotes)
	}
	if !strings.Contains(string(gotWeather), "Oslo") {
		t.Errorf("mcp__weather__search os: %s, want Oslo among the cities", gotWeather)
	}

	// Prompts with arguments.
	p, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__notes__summarize",
		Arguments: map[string]string{"topic": "coffee beans", "style": "haiku"}})
	if err != nil {
		t.Fatalf("prompts/get mcp__notes__summarize: %v", err)
	}
	if text := promptText(p); !strings.Contains(text, `"coffee beans"`) || !strings.Contains(text, "haiku") {
		t.Errorf("mcp__notes__summarize: %q, want the topic and style given", text)
	}
	tripArgs := weatherTripArgs(t, ctx, s)
	p, err = s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__weather__plan_trip", Arguments: tripArgs})
	if err != nil {
		t.Fatalf("prompts/get mcp__weather__plan_trip: %v", err)
	}
	text := promptText(p)
	for name, v := range tripArgs {
		if !strings.Contains(text, v) {
			t.Errorf("mcp__weather__plan_trip: %q does not mention argument %s=%q", text, name, v)
		}
	}
	// The prompt's embedded forecast comes back with its URI namespaced, and
	// that URI reads the same forecast through the trunk.
	directTrip := weather.result(ctx, "prompts/get", map[string]any{"name": "plan_trip", "arguments": tripArgs})
	if got, want := canonical(t, []byte(mustJSON(p))), canonical(t, []byte(withNamespacedURIs(t, directTrip, "weather", "messages"))); got != want {
		t.Errorf("plan_trip through the trunk:\n%s\nwant (weather's own, URIs namespaced):\n%s", got, want)
	}
	for _, m := range p.Messages {
		if er, ok := m.Content.(*mcp.EmbeddedResource); ok {
			if !strings.HasPrefix(er.Resource.URI, "mcptrunk://weather/") {
				t.Errorf("plan_trip's embedded resource has URI %q, want the namespaced form", er.Resource.URI)
				continue
			}
			if text := readText(t, ctx, s, er.Resource.URI); text != er.Resource.Text {
				t.Errorf("reading plan_trip's embedded %s back: %q, want %q", er.Resource.URI, text, er.Resource.Text)
			}
		}
	}

	// Resources: a static one, and template-expanded URIs on both servers.
	readme := readText(t, ctx, s, "mcptrunk://notes/notes://readme")
	if !strings.Contains(readme, "mcptrunk-notes is an example MCP server") {
		t.Errorf("notes://readme through the trunk: %q", readme)
	}
	if got, want := readText(t, ctx, s, "mcptrunk://notes/notes://note/2"), "Meeting notes\n\nProxy roadmap: namespacing, fan-out and result caching."; got != want {
		t.Errorf("mcptrunk://notes/notes://note/2: %q, want %q", got, want)
	}
	forecast := readText(t, ctx, s, "mcptrunk://weather/weather://forecast/Oslo")
	if !strings.Contains(forecast, "Oslo") {
		t.Errorf("mcptrunk://weather/weather://forecast/Oslo: %q, want a forecast for Oslo", forecast)
	}
	direct := weather.result(ctx, "resources/read", map[string]string{"uri": "weather://forecast/Oslo"})
	var dr mcp.ReadResourceResult
	if err := json.Unmarshal(direct, &dr); err != nil || len(dr.Contents) != 1 || dr.Contents[0].Text != forecast {
		t.Errorf("weather://forecast/Oslo directly: %s; through the trunk: %q", direct, forecast)
	}

	// The templates the host sees expand into URIs that route.
	templates := map[string]bool{}
	for tmpl, err := range s.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates[tmpl.URITemplate] = true
	}
	for _, tmpl := range []string{"mcptrunk://notes/notes://note/{id}", "mcptrunk://weather/weather://forecast/{city}"} {
		if !templates[tmpl] {
			t.Errorf("template %q is not listed; got %v", tmpl, templates)
		}
	}
}

// weatherTripArgs fills every argument plan_trip declares with a distinct
// value, so the test does not hard-code its argument names.
func weatherTripArgs(t *testing.T, ctx context.Context, s *host) map[string]string {
	t.Helper()
	for p, err := range s.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "mcp__weather__plan_trip" {
			continue
		}
		if len(p.Arguments) == 0 {
			t.Fatalf("mcp__weather__plan_trip declares no arguments")
		}
		args := map[string]string{}
		values := []string{"Oslo", "Bergen", "Tromso", "Alta"}
		for i, a := range p.Arguments {
			v := values[i%len(values)]
			if strings.Contains(strings.ToLower(a.Name), "day") {
				v = "3"
			}
			args[a.Name] = v
		}
		return args
	}
	t.Fatal("mcp__weather__plan_trip is not listed")
	return nil
}

func callTool(t *testing.T, ctx context.Context, s *host, name string, args map[string]any) json.RawMessage {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: isError: %s", name, mustJSON(res))
	}
	return json.RawMessage(mustJSON(res))
}

func promptText(p *mcp.GetPromptResult) string {
	var b strings.Builder
	for _, m := range p.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// readText reads a resource with one text content and checks that the
// content's URI is the namespaced one asked for.
func readText(t *testing.T, ctx context.Context, s *host, uri string) string {
	t.Helper()
	res, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
	}
	if got := res.Contents[0].URI; got != uri {
		t.Errorf("resources/read %s: contents uri %q, want the namespaced %q", uri, got, uri)
	}
	return res.Contents[0].Text
}

// TestByteFidelity: what the notes server sends arrives unchanged apart
// from the names and URIs the trunk rewrites.
func TestByteFidelity(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	direct := startRawDirect(t, ctx, "notes", notesBin)
	trunk := startRawTrunk(t, ctx, cfg)

	// The tools/list entry of rich.
	want := findItem(t, direct.list(ctx, "tools/list", "tools"), "name", "rich")
	got := findItem(t, trunk.list(ctx, "tools/list", "tools"), "name", "mcp__notes__rich")
	if want == nil || got == nil {
		t.Fatalf("rich listed directly: %v, mcp__notes__rich through the trunk: %v", want != nil, got != nil)
	}
	for _, f := range []string{"inputSchema", "outputSchema", "annotations", "icons", "title", "_meta", "description"} {
		w, g := getField(t, want, f), getField(t, got, f)
		if w == nil {
			t.Errorf("the notes server's rich has no %s: the fixture lost a field", f)
			continue
		}
		if g == nil {
			t.Errorf("mcp__notes__rich: %s is missing through the trunk", f)
			continue
		}
		if compact(t, w) != compact(t, g) {
			t.Errorf("mcp__notes__rich %s:\ndirect:  %s\nthrough: %s", f, compact(t, w), compact(t, g))
		}
	}
	sameExceptField(t, "rich's tools/list entry", want, got, "name", "rich", "mcp__notes__rich")

	// Results: tools/call, prompts/get.
	same := func(what, method string, directParams, trunkParams any) {
		t.Helper()
		w := direct.call(ctx, method, directParams)
		g := trunk.call(ctx, method, trunkParams)
		if w.Err != nil || g.Err != nil {
			t.Fatalf("%s: direct error %v, through the trunk %v", what, w.Err, g.Err)
		}
		if a, b := compact(t, w.Result), compact(t, g.Result); a != b {
			t.Errorf("%s:\ndirect:  %s\nthrough: %s", what, a, b)
		}
	}
	// rich's result carries an embedded resource and a resource link, whose
	// URIs the trunk rewrites to the namespaced form the host can read back;
	// everything else arrives as sent.
	args := map[string]any{"mode": "full", "count": 3}
	w := direct.result(ctx, "tools/call", map[string]any{"name": "rich", "arguments": args})
	g := trunk.result(ctx, "tools/call", map[string]any{"name": "mcp__notes__rich", "arguments": args})
	if want, got := withNamespacedURIs(t, w, "notes", "content"), compact(t, g); got != want {
		t.Errorf("tools/call rich:\ndirect, URIs namespaced: %s\nthrough:                 %s", want, got)
	}
	if strings.Count(compact(t, g), `"uri":"mcptrunk://notes/notes://note/`) != 2 {
		t.Errorf("tools/call rich: want both resource URIs namespaced: %s", g)
	}
	same("tools/call search", "tools/call",
		map[string]any{"name": "search", "arguments": map[string]any{"query": "e"}},
		map[string]any{"name": "mcp__notes__search", "arguments": map[string]any{"query": "e"}})
	pargs := map[string]string{"topic": "naming \"quotes\" & <tags> ünïcödé", "style": "terse"}
	same("prompts/get summarize", "prompts/get",
		map[string]any{"name": "summarize", "arguments": pargs},
		map[string]any{"name": "mcp__notes__summarize", "arguments": pargs})
	same("prompts/get daily_review", "prompts/get",
		map[string]any{"name": "daily_review"},
		map[string]any{"name": "mcp__notes__daily_review"})

	// resources/read: everything but the contents' uri, which is namespaced.
	for _, uri := range []string{"notes://note/1", "notes://all", "notes://readme"} {
		w := direct.result(ctx, "resources/read", map[string]string{"uri": uri})
		g := trunk.result(ctx, "resources/read", map[string]string{"uri": "mcptrunk://notes/" + uri})
		wf, gf := objectFields(t, w), objectFields(t, g)
		if len(wf) != len(gf) {
			t.Errorf("resources/read %s: members %v directly, %v through the trunk", uri, wf, gf)
			continue
		}
		for i := range wf {
			if wf[i].key != gf[i].key {
				t.Errorf("resources/read %s: member %d is %q directly, %q through the trunk", uri, i, wf[i].key, gf[i].key)
				continue
			}
			if wf[i].key != "contents" {
				if compact(t, wf[i].value) != compact(t, gf[i].value) {
					t.Errorf("resources/read %s: %s differs: %s vs %s", uri, wf[i].key, wf[i].value, gf[i].value)
				}
				continue
			}
			var wc, gc []json.RawMessage
			_ = json.Unmarshal(wf[i].value, &wc)
			_ = json.Unmarshal(gf[i].value, &gc)
			if len(wc) != len(gc) || len(wc) == 0 {
				t.Errorf("resources/read %s: %d contents directly, %d through the trunk", uri, len(wc), len(gc))
				continue
			}
			for j := range wc {
				sameExceptField(t, fmt.Sprintf("resources/read %s contents[%d]", uri, j), wc[j], gc[j], "uri", uri, "mcptrunk://notes/"+uri)
			}
		}
	}

	// An upstream's JSON-RPC error passes through with its code and message.
	we := direct.call(ctx, "resources/read", map[string]string{"uri": "notes://note/404"})
	ge := trunk.call(ctx, "resources/read", map[string]string{"uri": "mcptrunk://notes/notes://note/404"})
	if we.Err == nil || ge.Err == nil {
		t.Fatalf("reading a missing note: direct error %v, through the trunk %v", we.Err, ge.Err)
	}
	if mustJSON(we.Err) != mustJSON(ge.Err) {
		t.Errorf("reading a missing note: error directly %s, through the trunk %s", mustJSON(we.Err), mustJSON(ge.Err))
	}
}

// TestErrors: unknown tools give a JSON-RPC error naming the tool; a tool
// result with isError passes through as a result; the call CLI exits 0 on
// success and 1 otherwise.
func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	trunk := startRawTrunk(t, ctx, cfg)
	s := connectTrunk(t, ctx, cfg)

	for _, name := range []string{"mcp__notes__nope", "mcp__nosuch__x", "plain_name"} {
		r := trunk.call(ctx, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
		if r.Err == nil {
			t.Errorf("tools/call %s: result %s, want a JSON-RPC error", name, r.Result)
		} else if !strings.Contains(r.Err.Message, name) {
			t.Errorf("tools/call %s: error %q does not name the tool", name, r.Err.Message)
		}
		if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("tools/call %s through the SDK: error %v, want one naming the tool", name, err)
		}
	}
	for _, name := range []string{"mcp__notes__nope", "mcp__nosuch__x", "plain_name"} {
		r := trunk.call(ctx, "prompts/get", map[string]any{"name": name})
		if r.Err == nil || !strings.Contains(r.Err.Message, name) {
			t.Errorf("prompts/get %s: %v, want an error naming the prompt", name, r.Err)
		}
	}
	for _, uri := range []string{"mcptrunk://nosuch/x://y", "notes://note/1"} {
		r := trunk.call(ctx, "resources/read", map[string]any{"uri": uri})
		if r.Err == nil || !strings.Contains(r.Err.Message, uri) {
			t.Errorf("resources/read %s: %v, want an error naming the URI", uri, r.Err)
		}
	}

	// isError is a result, not an error.
	direct := startRawDirect(t, ctx, "notes", notesBin)
	missing := map[string]any{"id": "99"}
	r := trunk.call(ctx, "tools/call", map[string]any{"name": "mcp__notes__get_note", "arguments": missing})
	d := direct.call(ctx, "tools/call", map[string]any{"name": "get_note", "arguments": missing})
	if r.Err != nil {
		t.Fatalf("get_note 99 through the trunk: JSON-RPC error %v, want a result with isError", r.Err)
	}
	if compact(t, r.Result) != compact(t, d.Result) {
		t.Errorf("get_note 99: through the trunk %s, directly %s", r.Result, d.Result)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__get_note", Arguments: missing})
	if err != nil {
		t.Fatalf("get_note 99 through the SDK: %v", err)
	}
	if !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `note "99" not found` {
		t.Errorf("get_note 99 through the SDK: %s, want isError with the server's message", mustJSON(res))
	}
}

// TestCallCLI drives `mcptrunk call`.
func TestCallCLI(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, nil)
	const timeout = 30 * time.Second

	stdout, stderr, code := runCLI(t, timeout, "call", "--config", cfg, "mcp__notes__get_note", `{"id":"1"}`)
	if code != 0 {
		t.Errorf("call get_note 1: exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("call get_note 1: stdout is not a tool result: %v\n%s", err, stdout)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "Shopping list\n\nMilk, eggs, bread and coffee beans." {
		t.Errorf("call get_note 1 printed %s", stdout)
	}
	// notes speaks 2026-07-28 to the trunk; what a user reads has none of
	// that revision's members.
	if strings.Contains(stdout, "resultType") || strings.Contains(stdout, "io.modelcontextprotocol/") {
		t.Errorf("call printed the stateless revision's members: %s", stdout)
	}

	stdout, stderr, code = runCLI(t, timeout, "call", "--config", cfg, "mcp__weather__search", `{"city":"os"}`)
	if code != 0 || !strings.Contains(stdout, "Oslo") {
		t.Errorf("call mcp__weather__search: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	stdout, stderr, code = runCLI(t, timeout, "call", "--config", cfg, "mcp__notes__get_note", `{"id":"99"}`)
	if code != 1 {
		t.Errorf("call get_note 99: exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `"isError": true`) || !strings.Contains(stdout, `note \"99\" not found`) {
		t.Errorf("call get_note 99: stdout %q, want the result with isError", stdout)
	}

	for _, name := range []string{"mcp__notes__nope", "mcp__nosuch__x", "plain_name"} {
		stdout, stderr, code = runCLI(t, timeout, "call", "--config", cfg, name)
		if code != 1 {
			t.Errorf("call %s: exit %d, want 1\nstdout: %s\nstderr: %s", name, code, stdout, stderr)
		}
		if !strings.Contains(stderr, name) {
			t.Errorf("call %s: stderr %q does not name the tool", name, stderr)
		}
	}
}
