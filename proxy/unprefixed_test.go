package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream/catalogcache"
)

// sleeper is a server the tests never run: lazy, and listed from a catalog
// cache entry written for it, so that a catalog of any shape can be built
// from real Clients. A request routed to it tries to start it, which fails
// with an error naming the server: that is how a test sees where a request
// went.
type sleeper struct {
	unprefixed                           bool
	tools, prompts, resources, templates []string
}

// sleepingTrunk starts a trunk over sleepers and waits for it to settle.
func sleepingTrunk(t *testing.T, servers map[string]sleeper) *Trunk {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, err := catalogcache.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	never := filepath.Join(t.TempDir(), "never-run")
	entries := map[string]any{}
	for name, s := range servers {
		e := map[string]any{"command": never, "lazy": true}
		if s.unprefixed {
			e["namespace"] = false
		}
		entries[name] = e
	}
	doc, _ := json.Marshal(map[string]any{"mcpServers": entries})
	cfg, err := config.Parse(strings.NewReader(string(doc)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	store := catalogcache.Open(dir)
	for _, spec := range cfg.Servers {
		s := servers[spec.Name]
		e := &catalogcache.Entry{
			StoredAt: time.Now(), ProtocolVersion: "2025-11-25",
			Capabilities: json.RawMessage(`{"tools":{},"prompts":{},"resources":{"subscribe":true},"logging":{}}`),
			Tools:        sleeperItems("name", spec.Name, s.tools), Prompts: sleeperItems("name", spec.Name, s.prompts),
			Resources: sleeperItems("uri", spec.Name, s.resources), Templates: sleeperItems("uriTemplate", spec.Name, s.templates),
		}
		// The key the Fleet looks the entry up by, for a trunk with no host
		// yet (no 2025 revision preferred).
		if err := store.Save(spec.Name, catalogcache.Key(spec, "preferLegacy=false"), e); err != nil {
			t.Fatal(err)
		}
	}
	tr := New(cfg, nil)
	tr.Start(nil, "")
	t.Cleanup(func() { _ = tr.Close(context.Background()) })
	<-tr.Fleet().Settled()
	for _, c := range tr.Fleet().Clients() {
		if !c.Listed() {
			state, err := c.State()
			t.Fatalf("server %q is %s, not listed from its cache entry: %v", c.Name(), state, err)
		}
	}
	return tr
}

// sleeperItems are list items keyed by key, each saying whose it is.
func sleeperItems(key, server string, keys []string) []json.RawMessage {
	var out []json.RawMessage
	for _, k := range keys {
		enc, _ := json.Marshal(k)
		out = append(out, json.RawMessage(fmt.Sprintf(`{%q:%s,"description":"of %s"}`, key, enc, server)))
	}
	return out
}

// listed is list l as the host gets it: each item's key and its
// description (which says which server's item it is).
func listed(t *testing.T, tr *Trunk, l catalog.List) map[string]string {
	t.Helper()
	res, err := tr.Handle(context.Background(), catalog.Specs[l].Method, nil)
	if err != nil {
		t.Fatal(err)
	}
	var page map[string][]map[string]any
	if err := json.Unmarshal(res, &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, it := range page[catalog.Specs[l].Field] {
		key := it[catalog.Specs[l].Key].(string)
		if _, dup := out[key]; dup {
			t.Errorf("%s lists %q twice", catalog.Specs[l].Method, key)
		}
		out[key], _ = it["description"].(string)
	}
	return out
}

// routedTo is the server a request went to: the one that could not be
// started for it (sleepers never start). "" when the request failed for
// another reason, which is then in the error.
func routedTo(t *testing.T, tr *Trunk, method, params string) (string, error) {
	t.Helper()
	_, err := tr.Handle(context.Background(), method, json.RawMessage(params))
	if err == nil {
		t.Fatalf("%s %s: answered; a sleeper cannot answer", method, params)
	}
	msg := err.Error()
	i := strings.Index(msg, `server "`)
	if !strings.Contains(msg, "could not be started") || i < 0 {
		return "", err
	}
	rest := msg[i+len(`server "`):]
	return rest[:strings.IndexByte(rest, '"')], err
}

// Two unprefixed servers and a namespaced one: the unprefixed servers'
// names and URIs are listed as they are, a name two servers claim stays with
// the first (the trunk, then servers in name order), the later one's item is
// withheld and reported, and every request goes to the one server that
// lists its name.
func TestUnprefixedCatalogAndRouting(t *testing.T) {
	tr := sleepingTrunk(t, map[string]sleeper{
		"alpha": {unprefixed: true,
			tools:     []string{"echo", "mcp__beta__shared", "only.alpha"},
			prompts:   []string{"greet"},
			resources: []string{"file:///a", "mcptrunk://beta/doc"},
			templates: []string{"alpha://item/{id}"}},
		"beta": {
			tools:     []string{"shared", "only_beta"},
			prompts:   []string{"greet"},
			resources: []string{"doc", "file:///b"}},
		"gamma": {unprefixed: true,
			tools:     []string{"echo", "gamma_tool", "mcp__trunk__status"},
			resources: []string{"file:///a", "file:///g"},
			templates: []string{"alpha://item/{id}", "gamma://thing/{+path}", "alpha://{+path}"}},
	})

	tools := listed(t, tr, catalog.ListTools)
	want := map[string]string{
		"echo": "of alpha", "mcp__beta__shared": "of alpha", "only.alpha": "of alpha",
		"mcp__beta__only_beta": "of beta", "gamma_tool": "of gamma",
	}
	for name, owner := range want {
		if tools[name] != owner {
			t.Errorf("tools/list: %q is %q, want the item %s", name, tools[name], owner)
		}
	}
	if len(tools) != len(want)+2 { // and the trunk's status and wait_for_servers
		t.Errorf("tools/list: %v, want %v and the trunk's two", tools, want)
	}
	if d := tools["mcp__trunk__status"]; strings.HasPrefix(d, "of ") {
		t.Errorf("mcp__trunk__status is gamma's tool (%q), not the trunk's", d)
	}
	if p := listed(t, tr, catalog.ListPrompts); len(p) != 2 || p["greet"] != "of alpha" || p["mcp__beta__greet"] != "of beta" {
		t.Errorf("prompts/list: %v", p)
	}
	res := listed(t, tr, catalog.ListResources)
	for uri, owner := range map[string]string{"file:///a": "of alpha", "mcptrunk://beta/doc": "of alpha", "file:///g": "of gamma", "mcptrunk://beta/file:///b": "of beta"} {
		if res[uri] != owner {
			t.Errorf("resources/list: %q is %q, want the item %s", uri, res[uri], owner)
		}
	}
	if tpl := listed(t, tr, catalog.ListTemplates); len(tpl) != 3 || tpl["alpha://item/{id}"] != "of alpha" || tpl["gamma://thing/{+path}"] != "of gamma" || tpl["alpha://{+path}"] != "of gamma" {
		t.Errorf("resources/templates/list: %v", tpl)
	}

	// The conflicts, in the status and in the trunk's log messages.
	var got []string
	for _, c := range tr.snapshot().Conflicts {
		got = append(got, fmt.Sprintf("%s %s %s %s", c.Server, c.Kind, c.Name, c.Owner))
	}
	wantConflicts := []string{
		"beta tool mcp__beta__shared alpha",
		"beta resource mcptrunk://beta/doc alpha",
		"gamma tool echo alpha",
		"gamma tool mcp__trunk__status trunk",
		"gamma resource file:///a alpha",
		"gamma resource template alpha://item/{id} alpha",
	}
	slices.Sort(got)
	slices.Sort(wantConflicts)
	if !slices.Equal(got, wantConflicts) {
		t.Errorf("conflicts:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(wantConflicts, "\n  "))
	}
	msgs := strings.Join(tr.snapshot().Unmatched, "\n")
	for _, part := range []string{`server "gamma": tool "echo" is withheld: server "alpha" exports the same name`, `server "gamma": tool "mcp__trunk__status" is withheld: the name is one of mcptrunk's own`} {
		if !strings.Contains(msgs, part) {
			t.Errorf("the messages the trunk logs do not say %q:\n%s", part, msgs)
		}
	}
	var status struct {
		Conflicts []catalog.Conflict `json:"conflicts"`
	}
	if body, err := json.Marshal(tr.statusReport(tr.state.Load())); err != nil || json.Unmarshal(body, &status) != nil || len(status.Conflicts) != len(wantConflicts) {
		t.Errorf("the status report has conflicts %v, want %d (%v)", status.Conflicts, len(wantConflicts), err)
	}

	for _, tc := range []struct{ method, params, server string }{
		{"tools/call", `{"name":"echo"}`, "alpha"},
		{"tools/call", `{"name":"only.alpha"}`, "alpha"},
		{"tools/call", `{"name":"mcp__beta__shared"}`, "alpha"},
		{"tools/call", `{"name":"mcp__beta__only_beta"}`, "beta"},
		{"tools/call", `{"name":"gamma_tool"}`, "gamma"},
		{"prompts/get", `{"name":"greet"}`, "alpha"},
		{"prompts/get", `{"name":"mcp__beta__greet"}`, "beta"},
		{"resources/read", `{"uri":"file:///a"}`, "alpha"},
		{"resources/read", `{"uri":"mcptrunk://beta/doc"}`, "alpha"},
		{"resources/read", `{"uri":"file:///g"}`, "gamma"},
		{"resources/read", `{"uri":"mcptrunk://beta/file:///b"}`, "beta"},
		{"resources/read", `{"uri":"mcptrunk://beta/not/listed"}`, "beta"},
		{"resources/read", `{"uri":"gamma://thing/a/b/c"}`, "gamma"},
		{"resources/read", `{"uri":"alpha://other/7"}`, "gamma"},
		{"resources/subscribe", `{"uri":"file:///g"}`, "gamma"},
		{"completion/complete", `{"ref":{"type":"ref/resource","uri":"gamma://thing/{+path}"},"argument":{"name":"path","value":""}}`, "gamma"},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"x","value":""}}`, "alpha"},
	} {
		server, err := routedTo(t, tr, tc.method, tc.params)
		if server != tc.server {
			t.Errorf("%s %s went to %q (%v), want server %q", tc.method, tc.params, server, err, tc.server)
		}
	}

	// What no server lists, in a catalog with two unprefixed servers, is
	// refused naming it and them.
	for _, tc := range []struct{ method, params, want string }{
		{"tools/call", `{"name":"nope"}`, `unknown tool "nope": none of the unprefixed servers "alpha", "gamma" exports it`},
		{"resources/read", `{"uri":"other://x"}`, `unknown resource "other://x": no server lists it, no resource template of the unprefixed servers "alpha", "gamma" matches it`},
		{"resources/read", `{"uri":"alpha://item/7"}`, `resource "alpha://item/7": it matches resource templates of the unprefixed servers "alpha", "gamma"`},
	} {
		_, err := tr.Handle(context.Background(), tc.method, json.RawMessage(tc.params))
		if e := jsonrpc.AsError(err); e == nil || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %s: %v, want -32602 saying %q", tc.method, tc.params, err, tc.want)
		}
	}

	// The trunk's own tool is the trunk's, not gamma's of the same name.
	if res, err := tr.Handle(context.Background(), "tools/call", json.RawMessage(`{"name":"mcp__trunk__status"}`)); err != nil || !strings.Contains(string(res), `"conflicts"`) {
		t.Errorf("mcp__trunk__status: %s, %v; want the trunk's status, with the conflicts", res, err)
	}
}

// With one unprefixed server, what the catalog does not know goes to it:
// a URI it does not list (read through its templates or not at all), and a
// tool name, which it is then asked about.
func TestUnprefixedOnlyServer(t *testing.T) {
	tr := sleepingTrunk(t, map[string]sleeper{
		"remote": {unprefixed: true, tools: []string{"echo"}},
		"local":  {tools: []string{"echo"}},
	})
	if tools := listed(t, tr, catalog.ListTools); tools["echo"] != "of remote" || tools["mcp__local__echo"] != "of local" {
		t.Errorf("tools/list: %v", tools)
	}
	if c := tr.snapshot().Conflicts; len(c) != 0 {
		t.Errorf("conflicts %v, want none: the namespaced echo has another name", c)
	}
	for _, tc := range []struct{ method, params, server string }{
		{"tools/call", `{"name":"echo"}`, "remote"},
		{"tools/call", `{"name":"mcp__local__echo"}`, "local"},
		{"tools/call", `{"name":"not_listed"}`, "remote"},
		{"resources/read", `{"uri":"any://thing"}`, "remote"},
		{"resources/read", `{"uri":"mcptrunk://local/x"}`, "local"},
	} {
		if server, err := routedTo(t, tr, tc.method, tc.params); server != tc.server {
			t.Errorf("%s %s went to %q (%v), want server %q", tc.method, tc.params, server, err, tc.server)
		}
	}
	// A mcptrunk:// URI of a server that is not configured is the
	// unprefixed server's URI as far as the trunk can tell.
	if server, err := routedTo(t, tr, "resources/read", `{"uri":"mcptrunk://elsewhere/x"}`); server != "remote" {
		t.Errorf("mcptrunk://elsewhere/x went to %q (%v), want the unprefixed server", server, err)
	}
}

// Notifications from an unprefixed server reach the host as they are; a
// namespaced server's logger and URIs are rewritten.
func TestUnprefixedNotifications(t *testing.T) {
	tr := sleepingTrunk(t, map[string]sleeper{"own": {unprefixed: true}, "named": {}})
	for _, tc := range []struct{ server, method, params, want string }{
		{"own", "notifications/message", `{"level":"info","logger":"db","data":1}`, `{"level":"info","logger":"db","data":1}`},
		{"own", "notifications/message", `{"level":"info","data":1}`, `{"level":"info","data":1}`},
		{"own", "notifications/resources/updated", `{"uri":"file:///x"}`, `{"uri":"file:///x"}`},
		{"named", "notifications/message", `{"level":"info","logger":"db","data":1}`, `{"level":"info","logger":"named/db","data":1}`},
		{"named", "notifications/resources/updated", `{"uri":"file:///x"}`, `{"uri":"mcptrunk://named/file:///x"}`},
	} {
		if got := tr.exportNotification(tc.server, tc.method, json.RawMessage(tc.params)); string(got) != tc.want {
			t.Errorf("%s %s %s: %s, want %s", tc.server, tc.method, tc.params, got, tc.want)
		}
	}
}
