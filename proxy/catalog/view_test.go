package catalog

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// A view holds what its predicate admits, in every list, the searchable
// tools, the routes and the bare names of apps; what it leaves out is
// unknown with the same error as a name nothing has, and the predicate
// sees each tool's annotations.
func TestRestrict(t *testing.T) {
	cat := Build(Input{
		Servers: []Server{
			{Name: "notes", Spec: config.Spec{Name: "notes"}, Listed: true, Settled: true, Items: upstream.Catalog{
				Tools:   catItems("name", "add_note", "list_notes"),
				Prompts: catItems("name", "summarise"),
			}},
			{Name: "weather", Spec: config.Spec{Name: "weather"}, Listed: true, Settled: true, Items: upstream.Catalog{
				Tools: []upstream.Item{
					{Key: "forecast", Raw: []byte(`{"name":"forecast","annotations":{"readOnlyHint":true,"destructiveHint":false}}`)},
					{Key: "drop_city", Raw: []byte(`{"name":"drop_city"}`)},
				},
				Resources: catItems("uri", "weather://cities"),
			}},
		},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	})
	var asked []policy.Item
	view := cat.Restrict(func(it policy.Item) bool {
		asked = append(asked, it)
		return it.Server == "weather" && it.Annotations["destructiveHint"] != nil // only annotated tools, and the resource
	})
	if cat.Restricted() || !view.Restricted() {
		t.Fatal("Restricted: the whole catalog is not a view, the view is")
	}
	forecast := naming.Default.Name("weather", "forecast")
	names := func(l List) string {
		var out []string
		for _, e := range view.Lists[l] {
			out = append(out, e.Exported)
		}
		return strings.Join(out, ",")
	}
	if got := names(ListTools); got != forecast {
		t.Errorf("tools in the view: %q, want only %q", got, forecast)
	}
	if got := names(ListPrompts); got != "" {
		t.Errorf("prompts in the view: %q, want none", got)
	}
	if len(view.Lists[ListResources]) != 0 {
		t.Errorf("the resource has no annotations, yet is in the view")
	}
	if len(view.Searchable) != 1 || view.Searchable[0].Exported != forecast {
		t.Errorf("searchable: %+v, want forecast alone", view.Searchable)
	}
	if _, ok := view.Tools["weather"][forecast]; !ok || len(view.Tools["notes"]) != 0 || len(view.Prompts["notes"]) != 0 {
		t.Errorf("routes: tools %v prompts %v, want forecast alone", view.Tools, view.Prompts)
	}
	if got, err := view.AppTool("drop_city"); err != nil || got != "drop_city" {
		t.Errorf("AppTool of a hidden tool's bare name = %q, %v: it must stay unknown", got, err)
	}
	seen := map[string]int{}
	for _, it := range asked {
		seen[it.Kind+" "+it.Name]++
		if it.Name == "forecast" && it.Annotations["readOnlyHint"] != true {
			t.Errorf("the predicate got forecast without its annotations: %+v", it)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s decided %d times, want once", k, n)
		}
	}
	// The same error for a hidden tool and one that does not exist, with
	// suggestions only from what the view shows.
	hidden := view.UnknownName("tool", naming.Default.Name("notes", "add_note")).Error()
	missing := view.UnknownName("tool", naming.Default.Name("notes", "add_nothing")).Error()
	if strings.Contains(hidden, "did you mean") || strings.Contains(missing, "add_note\"?") || strings.Contains(hidden, "notes\" ") {
		t.Errorf("a view's unknown-name errors must not point at hidden items: %q / %q", hidden, missing)
	}
	if want := `unknown tool "` + naming.Default.Name("notes", "add_note") + `" (code -32602)`; hidden != want {
		t.Errorf("hidden tool: %q, want %q", hidden, want)
	}
	if got := view.UnknownName("tool", naming.Default.Name("weather", "forcast")).Error(); !strings.Contains(got, `did you mean "`+forecast+`"`) {
		t.Errorf("a typo of a visible tool: %q, want a suggestion of it", got)
	}
	if !cat.Admits("resource", "notes", "x", "y") || view.Admits("template", "notes", "t", "t") {
		t.Error("Admits: the whole catalog admits everything, the view what its predicate does")
	}
	// A server is shown when the view holds one of its items: the
	// caller's own tools and reports name no other.
	if !cat.Shows("notes") || !cat.Shows("starting") || !view.Shows("weather") || view.Shows("notes") || view.Shows("starting") {
		t.Errorf("Shows: the whole catalog shows every server; the view weather alone (notes %v, an unlisted server %v)", view.Shows("notes"), view.Shows("starting"))
	}
}

// A pinning report of some servers keeps theirs alone and leaves the
// report it was made from as it was.
func TestPinReportOf(t *testing.T) {
	r := &PinReport{Mode: "warn", Servers: map[string]pinState{"notes": {}, "weather": {}}}
	of := r.Of(func(s string) bool { return s == "weather" })
	if _, ok := of.Servers["weather"]; !ok || len(of.Servers) != 1 || of.Mode != "warn" || len(r.Servers) != 2 {
		t.Errorf("Of(weather) = %+v (from %+v)", of, r)
	}
	if (*PinReport)(nil).Of(func(string) bool { return true }) != nil {
		t.Error("the report of no pinning is none")
	}
}
