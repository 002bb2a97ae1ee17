package catalog

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

func TestEqualList(t *testing.T) {
	mk := func(l List, pairs ...string) *Catalog {
		var c Catalog
		for i := 0; i+1 < len(pairs); i += 2 {
			c.Lists[l] = append(c.Lists[l], Entry{Exported: pairs[i], Server: "s", Raw: pairs[i], Item: json.RawMessage(pairs[i+1])})
		}
		return &c
	}
	empty := &Catalog{}
	a := mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`)
	tests := []struct {
		name string
		a, b *Catalog
		l    List
		want bool
	}{
		{"both empty", empty, &Catalog{}, ListTools, true},
		{"nil and empty slice", empty, &Catalog{Lists: [ListCount][]Entry{ListTools: {}}}, ListTools, true},
		{"same catalog", a, a, ListTools, true},
		{"equal copies", a, mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`), ListTools, true},
		{"one more item", a, mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`, "z", `{"name":"z"}`), ListTools, false},
		{"one fewer item", a, mk(ListTools, "x", `{"name":"x"}`), ListTools, false},
		{"empty against non-empty", empty, a, ListTools, false},
		{"different name", a, mk(ListTools, "x", `{"name":"x"}`, "w", `{"name":"y"}`), ListTools, false},
		{"different item bytes", a, mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y","description":"new"}`), ListTools, false},
		{"whitespace counts", a, mk(ListTools, "x", `{"name":"x"}`, "y", `{"name": "y"}`), ListTools, false},
		{"other list differs", a, mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`), ListPrompts, true},
		{"order matters", mk(ListPrompts, "x", `1`, "y", `2`), mk(ListPrompts, "y", `2`, "x", `1`), ListPrompts, false},
	}
	for _, tt := range tests {
		if got := EqualList(tt.a, tt.b, tt.l); got != tt.want {
			t.Errorf("%s: EqualList = %v, want %v", tt.name, got, tt.want)
		}
		if got := EqualList(tt.b, tt.a, tt.l); got != tt.want {
			t.Errorf("%s (swapped): EqualList = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Only what the host sees matters: the upstream name and the owner are
	// not compared (the exported name already implies the owner).
	b := mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`)
	b.Lists[ListTools][0].Raw = "x.renamed"
	b.Lists[ListTools][1].Server = "other"
	if !EqualList(a, b, ListTools) {
		t.Errorf("EqualList compares fields the host never sees")
	}
	// A different list in b is reported for that list only.
	c := mk(ListTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`)
	c.Lists[ListResources] = []Entry{{Exported: "mcptrunk://s/r", Item: json.RawMessage(`{}`)}}
	if !EqualList(a, c, ListTools) || EqualList(a, c, ListResources) {
		t.Errorf("EqualList mixes lists up")
	}
}

// TestCatalogAssembled puts entries from several servers together the way
// Build does (without needing running upstreams) and checks that every exported tool and prompt routes
// back to its owner and upstream name, and every page lists them in order.
func TestCatalogAssembled(t *testing.T) {
	servers := map[string][]string{
		"files":   {"read", "write", "read.file", "read file", strings.Repeat("r", 100)},
		"weather": {"search", "forecast"},
		"notes":   {"search", "search.all"},
	}
	cat := &Catalog{Tools: map[string]map[string]string{}, Prompts: map[string]map[string]string{}}
	for server, raws := range servers {
		tools, err := exportNamed(naming.Default, server, catItems("name", raws...), nil, 64)
		if err != nil {
			t.Fatal(err)
		}
		cat.Lists[ListTools] = append(cat.Lists[ListTools], tools...)
		cat.Tools[server] = routes(tools)
		cat.Lists[ListResources] = append(cat.Lists[ListResources],
			exportURIs(server, catItems("uri", "file:///"+server), "uri", slog.New(slog.DiscardHandler))...)
	}
	for l := range cat.Lists {
		sortEntries(cat.Lists[l])
	}
	pages := catWalk(t, ListTools, 3, func(int) *Catalog { return cat })
	var names []string
	for _, p := range pages {
		names = append(names, p...)
	}
	if len(names) != 9 || !slices.IsSorted(names) {
		t.Fatalf("walked %v", names)
	}
	for _, name := range names {
		server, _, ok := naming.SplitMCPName(name)
		if !ok {
			t.Fatalf("SplitMCPName(%q) failed", name)
		}
		raw, ok := cat.Tools[server][name]
		if !ok || !slices.Contains(servers[server], raw) {
			t.Errorf("%q routes to %q on %q", name, raw, server)
		}
		if len(name) > 64 {
			t.Errorf("%q over budget", name)
		}
	}
	pages = catWalk(t, ListResources, 1, func(int) *Catalog { return cat })
	if len(pages) != 3 || pages[0][0] != "mcptrunk://files/file:///files" {
		t.Errorf("resources: %v", pages)
	}
}

// A server's list_changed that left its list as it was (a tool registered
// again under its name) still changes the list for EqualList, in the whole
// catalog and in a view that shows the server, and in no other list or
// view.
func TestEqualListCountsAnnouncedRelists(t *testing.T) {
	build := func(relistedTools uint64) *Catalog {
		items := func(tool string) upstream.Catalog {
			return upstream.Catalog{Tools: []upstream.Item{{Key: tool, Raw: []byte(`{"name":"` + tool + `"}`)}}}
		}
		a := items("search")
		a.Relisted[ListTools] = relistedTools
		return Build(Input{
			Servers: []Server{
				{Name: "a", Spec: config.Spec{Name: "a"}, Items: a, Listed: true, Settled: true},
				{Name: "b", Spec: config.Spec{Name: "b"}, Items: items("fetch"), Listed: true, Settled: true},
			},
			Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
			Logger: slog.New(slog.DiscardHandler),
		})
	}
	before, after := build(1), build(2)
	if EqualList(before, after, ListTools) || EqualList(after, before, ListTools) {
		t.Error("a relisted tools list that reads the same compares equal: its list_changed would not reach the host")
	}
	if !EqualList(before, after, ListPrompts) || !EqualList(build(1), before, ListTools) {
		t.Error("a relist changed another list, or an equal count compared unequal")
	}
	only := func(server string) func(policy.Item) bool {
		return func(it policy.Item) bool { return it.Server == server }
	}
	if EqualList(before.Restrict(only("a")), after.Restrict(only("a")), ListTools) {
		t.Error("a view showing the server that relisted compares equal")
	}
	if !EqualList(before.Restrict(only("b")), after.Restrict(only("b")), ListTools) {
		t.Error("a view that hides the server that relisted compares unequal: it learns of a hidden server's change")
	}
}
