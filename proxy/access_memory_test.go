package proxy

// trunk.policy and trunk.profiles, end to end through the trunk with
// in-memory servers: each session is served its caller's view, and what
// the view leaves out is unknown, never forwarded.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// teamServers are notes (a tool, a prompt, a resource) and weather (a
// read-only tool, one without annotations, so destructive by MCP's
// defaults, and a resource template). Every request they get is counted
// by Received.
func teamServers() memserver.Set {
	answer := func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "tools/call":
			return memserver.Text("done"), nil
		case "resources/read":
			return json.RawMessage(`{"contents":[{"uri":"x","text":"t"}]}`), nil
		case "prompts/get":
			return json.RawMessage(`{"messages":[]}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	return memserver.Set{
		"notes": {
			Tools:     []json.RawMessage{memserver.Tool("add_note", "adds a note")},
			Prompts:   []json.RawMessage{json.RawMessage(`{"name":"summarise"}`)},
			Resources: []json.RawMessage{json.RawMessage(`{"uri":"notes://all","name":"all"}`)},
			Handle:    answer,
		},
		"weather": {
			Tools: []json.RawMessage{
				json.RawMessage(`{"name":"forecast","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false}}`),
				memserver.Tool("drop_city", "forgets a city"),
			},
			Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"weather://city/{name}","name":"city"}`)},
			Handle:    answer,
		},
	}
}

var teamTrunk = map[string]any{
	"policy": map[string]any{"rules": []map[string]string{
		{"allow": `"admin" in claims.?groups.orValue([])`},
		{"allow": `"support" in claims.?groups.orValue([]) && server == "weather"`},
		{"deny": `annotations.destructiveHint && !("admin" in claims.?groups.orValue([]))`},
	}},
	"profiles": map[string]any{"weather": map[string]any{"servers": []string{"weather"}}},
}

func TestPolicyViewsInMemory(t *testing.T) {
	set := teamServers()
	tr, stdio := memTrunk(t, set, nil, teamTrunk, nil)
	tr.Share()
	attach := func(subject string, groups []any, profile string) *memHost {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: subject + profile, Subject: subject, Claims: map[string]any{"sub": subject, "groups": groups}, Profile: profile})}
		h.initialize(`{}`)
		return h
	}
	admin := attach("ada", []any{"admin"}, "")
	support := attach("sam", []any{"support"}, "")
	adminWeather := attach("ada", []any{"admin"}, "weather")
	stdio.initialize(`{}`)

	serverTools := func(h *memHost) []string {
		var out []string
		for _, n := range h.toolNames() {
			if !strings.HasPrefix(n, "mcp__trunk__") {
				out = append(out, n)
			}
		}
		return out
	}
	for _, tc := range []struct {
		who  string
		h    *memHost
		want []string
	}{
		{"admin", admin, []string{"mcp__notes__add_note", "mcp__weather__drop_city", "mcp__weather__forecast"}},
		{"support", support, []string{"mcp__weather__forecast"}},
		{"admin on the weather profile", adminWeather, []string{"mcp__weather__drop_city", "mcp__weather__forecast"}},
		{"the stdio host, with no claims", stdio, nil},
	} {
		if got := serverTools(tc.h); !slices.Equal(got, tc.want) {
			t.Errorf("%s sees tools %v, want %v", tc.who, got, tc.want)
		}
	}
	if names := admin.toolNames(); !slices.Contains(names, "mcp__trunk__status") {
		t.Errorf("admin's tools %v lack the trunk's own", names)
	}
	if names := stdio.toolNames(); slices.Contains(names, "mcp__trunk__status") {
		t.Errorf("the stdio host, allowed nothing, sees the trunk's status tool: %v", names)
	}

	// A forbidden item answers as one that does not exist, and its server
	// never hears of the request.
	before := len(set["notes"].Received())
	errText := func(res, errObj json.RawMessage) string {
		if res != nil {
			t.Fatalf("a hidden item answered %s", res)
		}
		var e struct{ Message string }
		_ = json.Unmarshal(errObj, &e)
		return e.Message
	}
	forbidden := errText(support.call("tools/call", `{"name":"mcp__notes__add_note","arguments":{}}`))
	missing := errText(support.call("tools/call", `{"name":"mcp__notes__add_nothing","arguments":{}}`))
	if forbidden != `unknown tool "mcp__notes__add_note"` || missing != `unknown tool "mcp__notes__add_nothing"` {
		t.Errorf("support calling a forbidden and a missing tool: %q / %q, want the same answer for each", forbidden, missing)
	}
	if got := errText(support.call("tools/call", `{"name":"mcp__weather__drop_city","arguments":{}}`)); got != `unknown tool "mcp__weather__drop_city"` {
		t.Errorf("support calling a destructive tool: %q", got)
	}
	if got := errText(support.call("tools/call", `{"name":"add_note","arguments":{}}`)); got != `unknown tool "add_note"` {
		t.Errorf("support calling a hidden tool by an app's bare name: %q", got)
	}
	if got := errText(support.call("prompts/get", `{"name":"mcp__notes__summarise"}`)); got != `unknown prompt "mcp__notes__summarise"` {
		t.Errorf("support getting a hidden prompt: %q", got)
	}
	if got := errText(support.call("resources/read", `{"uri":"mcptrunk://notes/notes://all"}`)); got != `unknown resource "mcptrunk://notes/notes://all"` {
		t.Errorf("support reading a hidden resource: %q", got)
	}
	if got := errText(adminWeather.call("resources/read", `{"uri":"mcptrunk://notes/notes://all"}`)); got != `unknown resource "mcptrunk://notes/notes://all"` {
		t.Errorf("admin on the weather profile reading notes: %q", got)
	}
	if got := errText(stdio.call("tools/call", `{"name":"mcp__trunk__status","arguments":{}}`)); got != `unknown tool "mcp__trunk__status"` {
		t.Errorf("the stdio host calling the status tool it may not see: %q", got)
	}
	if after := set["notes"].Received(); len(after) != before {
		t.Errorf("notes got %v from callers who may not see it", after[before:])
	}

	// What the view shows works.
	if res, errObj := support.call("tools/call", `{"name":"mcp__weather__forecast","arguments":{}}`); res == nil {
		t.Errorf("support calling forecast: %s", errObj)
	}
	if res, errObj := support.call("resources/read", `{"uri":"mcptrunk://weather/weather://city/oslo"}`); res == nil {
		t.Errorf("support reading a weather city through its template: %s", errObj)
	}
	if res, errObj := admin.call("prompts/get", `{"name":"mcp__notes__summarise"}`); res == nil {
		t.Errorf("admin getting summarise: %s", errObj)
	}
	if res, errObj := admin.call("tools/call", `{"name":"mcp__notes__add_note","arguments":{}}`); res == nil {
		t.Errorf("admin calling add_note: %s", errObj)
	}
}

// serve --profile: the stdio host is served its profile's view.
func TestStdioProfileInMemory(t *testing.T) {
	_, stdio := memTrunk(t, teamServers(), nil, map[string]any{"profiles": map[string]any{"weather": map[string]any{"servers": []string{"weather"}}}}, &Options{Profile: "weather"})
	stdio.initialize(`{}`)
	for _, name := range stdio.toolNames() {
		if !strings.HasPrefix(name, "mcp__weather__") && !strings.HasPrefix(name, "mcp__trunk__") {
			t.Errorf("the stdio host on the weather profile sees %s", name)
		}
	}
	if names := stdio.toolNames(); !slices.Contains(names, "mcp__weather__forecast") {
		t.Errorf("the stdio host on the weather profile lacks weather's tools: %v", names)
	}
}

// A reload that changes only the policy changes what a caller sees, though
// no server changed: the caller whose view changed is sent list_changed for
// the lists it changed in, and one whose view did not change is sent
// nothing (its next message is the answer to its own request).
func TestPolicyReloadAnnouncesViews(t *testing.T) {
	set := teamServers()
	tr, _ := memTrunk(t, set, nil, teamTrunk, nil)
	tr.Share()
	attach := func(subject string, groups []any) *memHost {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: subject, Subject: subject, Claims: map[string]any{"sub": subject, "groups": groups}})}
		h.initialize(`{}`)
		return h
	}
	admin, support := attach("ada", []any{"admin"}), attach("sam", []any{"support"})
	if got := support.toolNames(); slices.Contains(got, "mcp__notes__add_note") {
		t.Fatalf("support sees notes before the reload: %v", got)
	}
	admin.toolNames()

	if _, errObj := support.call("prompts/list", `{}`); errObj != nil {
		t.Fatalf("support listing prompts: %s", errObj)
	}

	// Support may now see everything too; admin's view is what it was.
	wider := map[string]any{"policy": map[string]any{"rules": []map[string]string{
		{"allow": `"admin" in claims.?groups.orValue([])`},
		{"allow": `"support" in claims.?groups.orValue([])`},
	}}}
	if err := tr.Reload(context.Background(), memConfig(t, set, nil, wider)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	support.waitFor("notifications/tools/list_changed")
	if got := support.toolNames(); !slices.Contains(got, "mcp__notes__add_note") {
		t.Errorf("support's tools after the reload: %v, want notes' add_note among them", got)
	}
	if !slices.Contains(support.seenMethods(), "notifications/prompts/list_changed") {
		t.Errorf("support was not told its prompts changed (notes' prompt is now in its view): %v", support.seenMethods())
	}
	admin.toolNames() // the reload's announcements come before this answer
	if got := admin.seenMethods(); len(got) != 0 {
		t.Errorf("admin, whose view did not change, was sent %v", got)
	}
}

// A session whose caller presents a token with other claims is served
// their view from then on, and told each list it has read that changed
// for it; a renewal with the same claims changes nothing and is told
// nothing.
func TestPolicyNewClaimsAnnounced(t *testing.T) {
	tr, _ := memTrunk(t, teamServers(), nil, teamTrunk, nil)
	tr.Share()
	h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: "ada", Subject: "ada", Claims: map[string]any{"sub": "ada", "groups": []any{"admin"}}})}
	h.initialize(`{}`)
	if got := h.toolNames(); !slices.Contains(got, "mcp__notes__add_note") {
		t.Fatalf("ada as admin sees %v", got)
	}
	var s *Session
	for _, x := range tr.hosts.all() {
		if x.ID() == "ada" {
			s = x
		}
	}
	if s == nil {
		t.Fatal("no session ada")
	}
	support := func() map[string]any { return map[string]any{"sub": "ada", "groups": []any{"support"}} }
	s.SetClaims(support())
	h.waitFor("notifications/tools/list_changed")
	if got := h.toolNames(); slices.Contains(got, "mcp__notes__add_note") || !slices.Contains(got, "mcp__weather__forecast") {
		t.Errorf("ada as support sees %v, want weather's forecast and not notes' add_note", got)
	}
	h.seen = nil
	s.SetClaims(support())
	h.toolNames() // what a renewal announced comes before this answer
	if got := h.seenMethods(); len(got) != 0 {
		t.Errorf("a renewal with the same claims announced %v", got)
	}
}

// The tasks methods exist for a caller when a server it sees offers
// tasks, as its initialize declares: one who sees none gets what a trunk
// with no such server answers.
func TestPolicyTasksOfHiddenServers(t *testing.T) {
	s, _ := taskServer()
	tr, _ := memTrunk(t, memserver.Set{"slow": s, "plain": &memserver.Server{Tools: []json.RawMessage{memserver.Tool("p", "p")}}}, nil, map[string]any{"policy": map[string]any{"rules": []map[string]string{
		{"allow": `"admin" in claims.?groups.orValue([])`},
		{"allow": `"support" in claims.?groups.orValue([]) && server == "plain"`},
	}}}, nil)
	tr.Share()
	attach := func(id, group string) *memHost {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: id, Subject: id, Claims: map[string]any{"sub": id, "groups": []any{group}}})}
		h.initialize(`{}`)
		return h
	}
	admin, support := attach("ada", "admin"), attach("sam", "support")
	if res, errObj := admin.call("tasks/get", `{"taskId":"x"}`); res != nil || !strings.Contains(string(errObj), "-32602") {
		t.Errorf("admin's tasks/get of an unknown id: %s %s, want -32602", res, errObj)
	}
	res, errObj := support.call("tasks/get", `{"taskId":"x"}`)
	if res != nil || !strings.Contains(string(errObj), "-32601") || !strings.Contains(string(errObj), "no server behind mcptrunk offers tasks") {
		t.Errorf("support's tasks/get: %s %s, want -32601: no server offers tasks", res, errObj)
	}
}

// A change of a server a caller does not see is no change to it: only
// the callers who see it are told their list changed.
func TestPolicyHiddenChangeNotAnnounced(t *testing.T) {
	set := teamServers()
	tr, _ := memTrunk(t, set, nil, teamTrunk, nil)
	tr.Share()
	attach := func(subject string, groups []any) *memHost {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: subject, Subject: subject, Claims: map[string]any{"sub": subject, "groups": groups}})}
		h.initialize(`{}`)
		h.toolNames()
		return h
	}
	// Attached first, support is announced to first (hostSet keeps the
	// order): once admin has its announcement, support's was queued.
	support := attach("sam", []any{"support"})
	admin := attach("ada", []any{"admin"})
	if err := set["notes"].SetTools(memserver.Tool("add_note", "adds a note"), memserver.Tool("drop_note", "drops one")); err != nil {
		t.Fatal(err)
	}
	admin.waitFor("notifications/tools/list_changed")
	support.toolNames() // an answer comes after what was queued before it
	if got := support.seenMethods(); len(got) != 0 {
		t.Errorf("support, who does not see notes, was told %v of its change", got)
	}
	// A change support sees is announced to it.
	if err := set["weather"].SetTools(json.RawMessage(`{"name":"forecast","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false}}`),
		json.RawMessage(`{"name":"radar","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false}}`)); err != nil {
		t.Fatal(err)
	}
	support.waitFor("notifications/tools/list_changed")
	if got := support.toolNames(); !slices.Contains(got, "mcp__weather__radar") {
		t.Errorf("support's tools after weather's change: %v", got)
	}
}
