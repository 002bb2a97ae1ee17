package trunktools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// fakeTrunk is a trunk with no servers and a fixed catalog, which records
// the tool calls routed through it.
type fakeTrunk struct {
	cat    *catalog.Catalog
	report StatusReport
	mu     sync.Mutex // guards called: a program's calls run at once
	called []string
}

func (f *fakeTrunk) WaitSettled(context.Context)              {}
func (f *fakeTrunk) Servers() []*upstream.Client              { return nil }
func (f *fakeTrunk) Server(string) (*upstream.Client, bool)   { return nil, false }
func (f *fakeTrunk) Catalog(context.Context) *catalog.Catalog { return f.cat }
func (f *fakeTrunk) Status() StatusReport                     { return f.report }
func (f *fakeTrunk) ReadResource(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"contents":[{"uri":"x","text":"hello"}]}`), nil
}

func (f *fakeTrunk) CallTool(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	f.called = append(f.called, string(params))
	return json.RawMessage(`{"content":[]}`), nil
}

// CallInRun records the call with its run's id; a call of
// mcp__weather__secret is refused as a hidden tool is.
func (f *fakeTrunk) CallInRun(_ context.Context, run string, params json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	f.called = append(f.called, run+" "+string(params))
	f.mu.Unlock()
	if strings.Contains(string(params), "mcp__weather__secret") {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, `unknown tool "mcp__weather__secret"`)
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"hits":["a"]}}`), nil
}

func (f *fakeTrunk) CodeMode() config.CodeMode { return config.CodeMode{Enabled: true}.WithDefaults() }

// The trunk's tools run against the small Trunk interface alone: status
// reports what the trunk says, search ranks the catalog's tools, call_tool
// routes through the trunk, an unknown tool is -32602.
func TestToolsAgainstAFakeTrunk(t *testing.T) {
	pol := catalog.PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64, ToolSearch: true})
	tools, _ := Entries(pol)
	notes := catalog.Entry{Exported: "mcp__notes__search_notes", Server: "notes", Raw: "search_notes",
		Item: json.RawMessage(`{"name":"mcp__notes__search_notes","description":"Search the notes by keyword"}`)}
	cat := &catalog.Catalog{Searchable: []catalog.Entry{notes}}
	cat.Lists[catalog.ListTools] = tools
	tr := &fakeTrunk{cat: cat, report: StatusReport{MaxMessageBytes: 7}}
	ctx := context.Background()

	res, err := Call(ctx, tr, "status", nil)
	if err != nil || !strings.Contains(string(res), `\"maxMessageBytes\":7`) {
		t.Errorf("status: %s, %v", res, err)
	}
	res, err = Call(ctx, tr, "search_tools", json.RawMessage(`{"arguments":{"query":"notes keyword"}}`))
	if err != nil || !strings.Contains(string(res), "mcp__notes__search_notes") {
		t.Errorf("search_tools: %s, %v", res, err)
	}
	if _, err := Call(ctx, tr, "call_tool", json.RawMessage(`{"arguments":{"name":"mcp__notes__search_notes","arguments":{"q":"x"}}}`)); err != nil || len(tr.called) != 1 || !strings.Contains(tr.called[0], `"name":"mcp__notes__search_notes"`) {
		t.Errorf("call_tool: %v, routed %v", err, tr.called)
	}
	res, err = Call(ctx, tr, "wait_for_servers", json.RawMessage(`{"arguments":{"timeoutSeconds":0}}`))
	if err != nil || !strings.Contains(string(res), `\"pending\":[]`) {
		t.Errorf("wait_for_servers: %s, %v", res, err)
	}
	if _, err := Call(ctx, tr, "nope", nil); err == nil || !strings.Contains(err.Error(), "no such tool") {
		t.Errorf("an unknown tool: %v", err)
	}
}

// A caller's status report, from the tool and the resource, names the
// servers its view shows, and the name conflicts among those alone.
func TestStatusOfAView(t *testing.T) {
	cat := &catalog.Catalog{}
	for _, server := range []string{"notes", "weather"} {
		name := naming.Default.Name(server, "a")
		cat.Lists[catalog.ListTools] = append(cat.Lists[catalog.ListTools], catalog.Entry{Exported: name, Server: server, Raw: "a", Item: json.RawMessage(`{"name":"` + name + `"}`)})
	}
	report := StatusReport{Servers: []upstream.Status{{Server: "notes"}, {Server: "weather"}}, Conflicts: []catalog.Conflict{
		{Server: "weather", Kind: "tool", Name: "a", Owner: "notes"}, {Server: "notes", Kind: "tool", Name: "b", Owner: "weather"},
		{Server: "weather", Kind: "tool", Name: "status", Owner: naming.TrunkServer}}}
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		cat       *catalog.Catalog
		servers   string
		conflicts int
	}{
		{"the whole catalog", cat, "notes,weather", 3},
		{"weather's view", cat.Restrict(func(it policy.Item) bool { return it.Server == "weather" }), "weather", 1},
	} {
		tr := &fakeTrunk{cat: tc.cat, report: report}
		var got StatusReport
		res, err := Call(ctx, tr, "status", nil)
		if err == nil {
			var r struct{ StructuredContent StatusReport }
			err = json.Unmarshal(res, &r)
			got = r.StructuredContent
		}
		var names []string
		for _, s := range got.Servers {
			names = append(names, s.Server)
		}
		if err != nil || strings.Join(names, ",") != tc.servers || len(got.Conflicts) != tc.conflicts {
			t.Errorf("%s: status names %v with %d conflicts (%v), want %s and %d", tc.name, names, len(got.Conflicts), err, tc.servers, tc.conflicts)
		}
		read, err := ReadResource(ctx, tr, statusURI)
		if err != nil || strings.Contains(string(read), "notes") != strings.Contains(tc.servers, "notes") {
			t.Errorf("%s: the status resource: %s, %v", tc.name, read, err)
		}
	}
}
