package trunktools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/codemode"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// RunProgram runs programs over the runner's protocol in this process:
// what a runner process would do, without building one.
func (f *fakeTrunk) RunProgram(ctx context.Context, code string, o child.Options) (child.Result, error) {
	return codemode.Local(ctx, code, o)
}

// codeTrunk is a fake trunk whose catalog has the code-mode tools and two
// servers' tools, with schemas.
func codeTrunk(t *testing.T) *fakeTrunk {
	t.Helper()
	own, _ := Entries(catalog.PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64, CodeMode: config.CodeMode{Enabled: true}}))
	cat := &catalog.Catalog{Tools: map[string]map[string]string{naming.TrunkServer: {}}, Searchable: []catalog.Entry{
		{Exported: "mcp__notes__search_notes", Server: "notes", Raw: "search_notes", Item: json.RawMessage(`{"name":"mcp__notes__search_notes","description":"Search the notes.",` +
			`"inputSchema":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":["string","null"]}}},"required":["query"]},` +
			`"outputSchema":{"type":"object","properties":{"hits":{"type":"array","items":{"type":"string"}}}}}`)},
		{Exported: "mcp__weather__get-forecast", Server: "weather", Raw: "get-forecast", Item: json.RawMessage(`{"name":"mcp__weather__get-forecast",` +
			`"inputSchema":{"type":"object","properties":{"unit":{"enum":["c","f"]}}}}`)},
	}}
	for _, e := range own {
		cat.Tools[naming.TrunkServer][e.Exported] = e.Raw
	}
	cat.Lists[catalog.ListTools] = own
	return &fakeTrunk{cat: cat}
}

// code_api declares each tool as a typed function, grouped by server.
func TestCodeAPIDeclarations(t *testing.T) {
	res, err := Call(context.Background(), codeTrunk(t), "code_api", nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("code_api: %s, %v", res, err)
	}
	for _, want := range []string{
		"interface CallToolResult<S = unknown>",
		"declare function call(name: string",
		"  namespace notes {\n    /** Search the notes. (mcp__notes__search_notes) */\n" +
			"    function search_notes(args: { limit?: number; query: string; tags?: (string | null)[] }): Promise<CallToolResult<{ hits?: string[] }>>;",
		`function get_forecast(args?: { unit?: "c" | "f" }): Promise<CallToolResult>;`,
	} {
		if !strings.Contains(r.Content[0].Text, want) {
			t.Errorf("code_api lacks %q:\n%s", want, r.Content[0].Text)
		}
	}
}

// run_code runs the program with every call routed through CallInRun
// under one run id; a refused call is catchable with the refusal's
// message; the result is what the program returned.
func TestRunCodeRoutesEachCall(t *testing.T) {
	tr := codeTrunk(t)
	code := `
		const [a, b] = await Promise.all([tools.notes.search_notes({query: "x"}), call("mcp__weather__get-forecast", {unit: "c"})]);
		let refused;
		try { await call("mcp__weather__secret", {}); } catch (e) { refused = e.message; }
		console.log("done");
		return {hits: a.structuredContent.hits, b: b.content[0].text, refused};`
	args, _ := json.Marshal(map[string]any{"arguments": map[string]string{"code": code}})
	res, err := Call(context.Background(), tr, "run_code", args)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		StructuredContent runReport
		IsError           bool
	}
	if err := json.Unmarshal(res, &r); err != nil || r.IsError {
		t.Fatalf("run_code: %s, %v", res, err)
	}
	got := r.StructuredContent
	if string(got.Result) != `{"hits":["a"],"b":"ok","refused":"unknown tool \"mcp__weather__secret\""}` || got.Calls != 3 || len(got.Logs) != 1 || got.Run == "" {
		t.Errorf("run_code: %s", res)
	}
	if len(tr.called) != 3 {
		t.Fatalf("calls routed: %q", tr.called)
	}
	for _, c := range tr.called {
		if !strings.HasPrefix(c, got.Run+" ") {
			t.Errorf("call %q does not carry the run's id %s", c, got.Run)
		}
	}
}

// A run that fails is an error result naming why, and run_code cannot
// call itself.
func TestRunCodeFails(t *testing.T) {
	for code, want := range map[string]string{
		`return await call("mcp__trunk__run_code", {code: "return 1"});`: "run_code cannot be called from a program",
		`return (`:                "compiling the program",
		`throw new Error("no")`:   "the program threw Error: no",
		`return process.env.HOME`: "process is not defined",
		`for (let i = 0; ; i++) await call("mcp__notes__search_notes", {query: "q"});`: "maxCalls",
	} {
		args, _ := json.Marshal(map[string]any{"arguments": map[string]string{"code": code}})
		res, err := Call(context.Background(), codeTrunk(t), "run_code", args)
		if err != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), want) {
			t.Errorf("%s: %s, %v; want an error result naming %q", code, res, err, want)
		}
	}
	res, err := Call(context.Background(), codeTrunk(t), "run_code", json.RawMessage(`{"arguments":{}}`))
	if err != nil || !strings.Contains(string(res), "a program (code) is required") {
		t.Errorf("no code: %s, %v", res, err)
	}
}

// The code-mode tools are offered when trunk.codeMode is on, and only then.
func TestCodeModeToolsOnlyWhenOn(t *testing.T) {
	for _, on := range []bool{false, true} {
		tools, _ := Entries(catalog.PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64, CodeMode: config.CodeMode{Enabled: on}}))
		var names []string
		for _, e := range tools {
			names = append(names, e.Exported)
		}
		want := "mcp__trunk__status mcp__trunk__wait_for_servers"
		if on {
			want += " mcp__trunk__run_code mcp__trunk__code_api"
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("code mode %v: tools %s, want %s", on, got, want)
		}
	}
}
