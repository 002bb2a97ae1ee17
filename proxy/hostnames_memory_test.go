package proxy

// Names fitted to the host by its clientInfo (Session.fitNames), through
// the trunk with in-memory servers.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/naming"
)

// hostInit initializes h as the 2025-era host whose clientInfo name is client.
func hostInit(t *testing.T, h *memHost, client string) {
	t.Helper()
	if res, errObj := h.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"2.1.328"}}`); res == nil {
		t.Fatalf("initialize: %s", errObj)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// statelessToolNames lists the tools as a 2026-07-28 request whose _meta
// names client would.
func statelessToolNames(t *testing.T, h *memHost, client string) []string {
	t.Helper()
	res, errObj := h.call("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"`+client+`","version":"1"}}}`)
	var list struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatalf("tools/list: %s %s", res, errObj)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// longName is the one of names that is notes' 100-character tool.
func longName(t *testing.T, names []string) string {
	t.Helper()
	for _, n := range names {
		if strings.HasPrefix(n, "mcp__notes__get_note_with") {
			return n
		}
	}
	t.Fatalf("no name for notes' long tool in %q", names)
	return ""
}

// A host whose clientInfo says Claude Code is offered only names that fit
// 64 characters behind mcp__trunk__, and each routes to its tool; the
// names that fit already are unchanged; another host of the same config
// keeps the 64-character names; --host-prefix (ExactHostPrefix) wins over
// the clientInfo; a stateless Claude Code request gets the fitted names.
func TestHostNamesClaudeCodeInMemory(t *testing.T) {
	prefix := "mcp__" + naming.AssumedTrunkName + "__"

	_, h := memTrunk(t, namesServers(true), nil, nil, nil)
	hostInit(t, h, "claude-code")
	names := h.toolNames()
	for _, n := range names {
		if len(prefix+n) > naming.ModelNameLimit {
			t.Errorf("Claude Code offers %q: %d characters", prefix+n, len(prefix+n))
		}
	}
	for _, want := range []string{"mcp__notes__echo", "mcp__weather__search", "mcp__everything__trigger-long-running-operation", "mcp__trunk__status"} {
		if !strings.Contains(strings.Join(names, " ")+" ", want+" ") {
			t.Errorf("%s is missing or renamed: %q", want, names)
		}
	}
	long := longName(t, names)
	if text, errObj := callText(h, long, `{}`); text != "notes:"+namesLongTool {
		t.Errorf("%s: %q %s, want notes:%s", long, text, errObj, namesLongTool)
	}
	if text, errObj := callText(h, "mcp__notes__echo", `{"text":"fitted"}`); text != "fitted" {
		t.Errorf("mcp__notes__echo: %q %s", text, errObj)
	}
	// The same names on the next list: nothing renamed under the host.
	if again := longName(t, h.toolNames()); again != long {
		t.Errorf("the long tool was %q, then %q", long, again)
	}
	// The name another host is offered is not the fitted one.
	full := namesShortened("mcp__", "notes", namesLongTool, naming.DefaultMaxLength)
	if long == full {
		t.Errorf("Claude Code is offered the 64-character name %q", full)
	}

	_, other := memTrunk(t, namesServers(false), nil, nil, nil)
	hostInit(t, other, "memhost")
	if got := longName(t, other.toolNames()); got != full {
		t.Errorf("a host not known to prefix is offered %q, want %q", got, full)
	}

	_, exact := memTrunk(t, namesServers(false), nil, map[string]any{"maxNameLength": 60}, &Options{ExactHostPrefix: true})
	hostInit(t, exact, "claude-code")
	if got, want := longName(t, exact.toolNames()), namesShortened("mcp__", "notes", namesLongTool, 60); got != want {
		t.Errorf("with an exact host prefix Claude Code is offered %q, want the config's %q", got, want)
	}

	_, stateless := memTrunk(t, namesServers(false), nil, nil, nil)
	snames := statelessToolNames(t, stateless, "claude-code")
	if got := longName(t, snames); got != long {
		t.Errorf("a stateless Claude Code request is offered %q, want %q", got, long)
	}
	if got := longName(t, statelessToolNames(t, stateless, "some-other-host")); got != full {
		t.Errorf("a stateless request of another host is offered %q, want %q", got, full)
	}
}

// The stateless header check (Trunk.ToolHeaderParams) finds a tool by the
// name its host is offered: Claude Code's fitted name of a long tool that
// mirrors an argument in a header gives that argument, as the 64-character
// name does for a host that adds no prefix.
func TestToolHeaderParamsFittedName(t *testing.T) {
	tool := `{"name":"` + namesLongTool + `","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`
	tr, h := memTrunk(t, memserver.Set{"notes": &memserver.Server{Tools: []json.RawMessage{json.RawMessage(tool)}}}, nil, nil, nil)
	fitted := longName(t, statelessToolNames(t, h, "claude-code"))
	full := longName(t, statelessToolNames(t, h, "other"))
	if fitted == full {
		t.Fatalf("Claude Code is offered the 64-character name %q", full)
	}
	for _, c := range []struct{ name, client string }{{fitted, "claude-code"}, {full, "other"}} {
		if got := tr.ToolHeaderParams(c.name, c.client, &SessionOptions{}); got["region"] != "Region" {
			t.Errorf("ToolHeaderParams(%q, %q) = %v, want region in Mcp-Param-Region", c.name, c.client, got)
		}
	}
}
