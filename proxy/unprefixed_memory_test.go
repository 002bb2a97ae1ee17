package proxy

// Two servers without a namespace, end to end through the trunk with
// in-memory servers (moved from cmd/mcptrunk's TestServeUnprefixed, which
// ran notes and weather as processes for the same checks; the part about
// mcptrunk check stays there).

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// verbatimServers are notes and weather in their shape: both have a tool
// called search; notes' rich answers with an embedded resource and a link
// to one of its URIs; each reads URIs of its own template. Every answer
// is fixed bytes, held in answers by method and name or URI.
func verbatimServers() (memserver.Set, map[string]string) {
	answers := map[string]string{
		"notes tools/call search":                          `{"content":[{"type":"text","text":"1 roadmap"}]}`,
		"notes tools/call rich":                            `{"content":[{"type":"resource","resource":{"uri":"notes://note/1","text":"roadmap"}},{"type":"resource_link","uri":"notes://note/2","name":"tea"}]}`,
		"notes tools/call get_note":                        `{"content":[{"type":"text","text":"roadmap"}],"_meta":{"k":"v"}}`,
		"notes prompts/get summarize":                      `{"messages":[{"role":"user","content":{"type":"text","text":"Summarize tea as a haiku."}}]}`,
		"notes resources/read notes://readme":              `{"contents":[{"uri":"notes://readme","text":"read me"}]}`,
		"notes resources/read notes://note/2":              `{"contents":[{"uri":"notes://note/2","text":"tea"}]}`,
		"weather tools/call forecast":                      `{"content":[{"type":"text","text":"Oslo: sun, rain"}]}`,
		"weather resources/read weather://forecast/Bergen": `{"contents":[{"uri":"weather://forecast/Bergen","text":"rain"}]}`,
	}
	serve := func(server string, tools, prompts []string, resources, templates []json.RawMessage) *memserver.Server {
		s := &memserver.Server{Resources: resources, Templates: templates}
		for _, name := range tools {
			s.Tools = append(s.Tools, memserver.Tool(name, server+"'s "+name))
		}
		for _, name := range prompts {
			s.Prompts = append(s.Prompts, json.RawMessage(`{"name":"`+name+`"}`))
		}
		s.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			key, _ := rawjson.StringField(params, "name")
			if method == "resources/read" {
				key, _ = rawjson.StringField(params, "uri")
			}
			if a, ok := answers[server+" "+method+" "+key]; ok {
				return json.RawMessage(a), nil
			}
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s has no %s %s", server, method, key)
		}
		return s
	}
	return memserver.Set{
		"notes": serve("notes", []string{"search", "get_note", "rich"}, []string{"summarize"},
			[]json.RawMessage{json.RawMessage(`{"uri":"notes://readme","name":"readme"}`)},
			[]json.RawMessage{json.RawMessage(`{"uriTemplate":"notes://note/{id}","name":"note"}`)}),
		"weather": serve("weather", []string{"search", "forecast"}, nil, nil,
			[]json.RawMessage{json.RawMessage(`{"uriTemplate":"weather://forecast/{city}","name":"forecast"}`)}),
	}, answers
}

func TestUnprefixedAnswersVerbatim(t *testing.T) {
	set, answers := verbatimServers()
	specs := map[string]map[string]any{"notes": {"namespace": false}, "weather": {"namespace": false}}
	log := &testkit.Buffer{}
	_, h := memTrunk(t, set, specs, nil, &Options{Logger: slog.New(slog.NewTextHandler(io.Writer(log), nil))})
	h.initialize(`{}`)

	tools := h.toolNames()
	for _, name := range []string{"search", "get_note", "rich", "forecast", "mcp__trunk__status"} {
		if !slices.Contains(tools, name) {
			t.Errorf("tools/list has no %q: %q", name, tools)
		}
	}
	if len(slices.Compact(slices.Clone(tools))) != len(tools) {
		t.Errorf("tools/list lists a name more than once: %q", tools)
	}
	for _, name := range tools {
		if strings.HasPrefix(name, "mcp__notes__") || strings.HasPrefix(name, "mcp__weather__") {
			t.Errorf("tools/list has the namespaced %q", name)
		}
	}

	// Each answer is its server's own, byte for byte: no name or URI in
	// it is rewritten (rich returns an embedded resource and a link), and
	// a URI neither lists goes to the server whose template it fits.
	for _, c := range []struct{ server, method, params string }{
		{"notes", "tools/call", `{"name":"search","arguments":{"query":"roadmap"}}`},
		{"notes", "tools/call", `{"name":"rich","arguments":{}}`},
		{"notes", "tools/call", `{"name":"get_note","arguments":{"id":"1"}}`},
		{"weather", "tools/call", `{"name":"forecast","arguments":{"city":"Oslo","days":2}}`},
		{"notes", "prompts/get", `{"name":"summarize","arguments":{"topic":"tea","style":"haiku"}}`},
		{"notes", "resources/read", `{"uri":"notes://readme"}`},
		{"notes", "resources/read", `{"uri":"notes://note/2"}`},
		{"weather", "resources/read", `{"uri":"weather://forecast/Bergen"}`},
	} {
		key, _ := rawjson.StringField(json.RawMessage(c.params), "name")
		if c.method == "resources/read" {
			key, _ = rawjson.StringField(json.RawMessage(c.params), "uri")
		}
		want := answers[c.server+" "+c.method+" "+key]
		if got, errObj := h.call(c.method, c.params); string(got) != want {
			t.Errorf("%s %s through the trunk:\n%s %s\nfrom %s:\n%s", c.method, c.params, got, errObj, c.server, want)
		}
	}

	// weather's search is withheld, and said to be.
	if !strings.Contains(log.String(), `tool \"search\" is withheld`) && !strings.Contains(log.String(), `tool "search" is withheld`) {
		t.Errorf("the trunk's log does not say weather's search is withheld:\n%s", log)
	}
	text, errObj := callText(h, "mcp__trunk__status", `{}`)
	var report struct {
		Conflicts []struct{ Server, Kind, Name, Owner string } `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(text), &report); err != nil {
		t.Fatalf("status: %v: %q %s", err, text, errObj)
	}
	if c := report.Conflicts; len(c) != 1 || c[0].Server != "weather" || c[0].Kind != "tool" || c[0].Name != "search" || c[0].Owner != "notes" {
		t.Errorf("mcp__trunk__status conflicts: %+v, want weather's tool search, kept by notes", c)
	}
}
