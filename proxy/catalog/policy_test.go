package catalog

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The allow and deny filters of a server export exactly what they let
// through: tools by name, prompts by name, resources by URI and templates
// by URI template (the resources filter serves both); a filtered tool has
// no route; a pattern that matches nothing is reported once the server has
// settled, naming the server, the field and the pattern. (TestPolicyFilters
// in cmd/mcptrunk runs the same against the npm reference servers.)
func TestFilters(t *testing.T) {
	items := upstream.Catalog{
		Tools:     catItems("name", "add_note", "get_note", "echo", "search"),
		Prompts:   catItems("name", "summarize", "plan"),
		Resources: catItems("uri", "notes://all", "notes://readme"),
		Templates: catItems("uriTemplate", "notes://note/{id}", "files://{path}"),
	}
	spec := config.Spec{Name: "notes",
		Tools:     config.Filter{Allow: []string{"*note*", "echo", "nomatch_tool_*"}, Deny: []string{"add_*"}},
		Prompts:   config.Filter{Allow: []string{"summarize", "nomatch_prompt"}},
		Resources: config.Filter{Deny: []string{"notes://all", "files://*", "nomatch://*"}},
	}
	build := func(settled bool) *Catalog {
		return Build(Input{
			Servers: []Server{{Name: "notes", Spec: spec, Items: items, Listed: true, Settled: settled}},
			Policy:  PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
			Logger:  slog.New(slog.DiscardHandler),
		})
	}
	cat := build(true)
	exported := func(l List) []string {
		var out []string
		for _, e := range cat.Lists[l] {
			if e.Server == "notes" {
				out = append(out, e.Exported)
			}
		}
		slices.Sort(out)
		return out
	}
	name := func(raw string) string { return naming.Default.Name("notes", raw) }
	for l, want := range map[List][]string{
		ListTools:     {name("echo"), name("get_note")},
		ListPrompts:   {name("summarize")},
		ListResources: {naming.ResourceURI("notes", "notes://readme")},
		ListTemplates: {naming.ResourceURI("notes", "notes://note/{id}")},
	} {
		if got := exported(l); !slices.Equal(got, want) {
			t.Errorf("list %d: %q, want %q", l, got, want)
		}
	}
	if _, ok := cat.Tools["notes"][name("add_note")]; ok {
		t.Error("a denied tool has a route")
	}
	unmatched := strings.Join(cat.Unmatched, "\n")
	for _, want := range []string{`tools.allow pattern "nomatch_tool_*"`, `prompts.allow pattern "nomatch_prompt"`, `resources.deny pattern "nomatch://*"`} {
		if !strings.Contains(unmatched, `server "notes": `+want) {
			t.Errorf("unmatched %q: want %q reported for notes", cat.Unmatched, want)
		}
	}
	for _, matched := range []string{`"*note*"`, `"add_*"`, `"files://*"`} {
		if strings.Contains(unmatched, matched) {
			t.Errorf("unmatched %q reports %s, which matches", cat.Unmatched, matched)
		}
	}
	if u := build(false).Unmatched; len(u) != 0 {
		t.Errorf("a server still starting has its patterns reported: %q", u)
	}
}
