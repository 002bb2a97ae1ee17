package trunktools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// fakeTrunk is a trunk with no servers and a fixed catalog, which records
// the tool calls routed through it.
type fakeTrunk struct {
	cat    *catalog.Catalog
	called []string
}

func (f *fakeTrunk) WaitSettled(context.Context)              {}
func (f *fakeTrunk) Servers() []*upstream.Client              { return nil }
func (f *fakeTrunk) Server(string) (*upstream.Client, bool)   { return nil, false }
func (f *fakeTrunk) Catalog(context.Context) *catalog.Catalog { return f.cat }
func (f *fakeTrunk) Status() StatusReport                     { return StatusReport{MaxMessageBytes: 7} }
func (f *fakeTrunk) ReadResource(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"contents":[{"uri":"x","text":"hello"}]}`), nil
}

func (f *fakeTrunk) CallTool(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	f.called = append(f.called, string(params))
	return json.RawMessage(`{"content":[]}`), nil
}

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
	tr := &fakeTrunk{cat: cat}
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
