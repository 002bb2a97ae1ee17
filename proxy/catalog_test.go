package proxy

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/naming"
)

func TestEqualList(t *testing.T) {
	mk := func(l list, pairs ...string) *catalog {
		var c catalog
		for i := 0; i+1 < len(pairs); i += 2 {
			c.lists[l] = append(c.lists[l], entry{exported: pairs[i], server: "s", raw: pairs[i], item: json.RawMessage(pairs[i+1])})
		}
		return &c
	}
	empty := &catalog{}
	a := mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`)
	tests := []struct {
		name string
		a, b *catalog
		l    list
		want bool
	}{
		{"both empty", empty, &catalog{}, listTools, true},
		{"nil and empty slice", empty, &catalog{lists: [listCount][]entry{listTools: {}}}, listTools, true},
		{"same catalog", a, a, listTools, true},
		{"equal copies", a, mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`), listTools, true},
		{"one more item", a, mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`, "z", `{"name":"z"}`), listTools, false},
		{"one fewer item", a, mk(listTools, "x", `{"name":"x"}`), listTools, false},
		{"empty against non-empty", empty, a, listTools, false},
		{"different name", a, mk(listTools, "x", `{"name":"x"}`, "w", `{"name":"y"}`), listTools, false},
		{"different item bytes", a, mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y","description":"new"}`), listTools, false},
		{"whitespace counts", a, mk(listTools, "x", `{"name":"x"}`, "y", `{"name": "y"}`), listTools, false},
		{"other list differs", a, mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`), listPrompts, true},
		{"order matters", mk(listPrompts, "x", `1`, "y", `2`), mk(listPrompts, "y", `2`, "x", `1`), listPrompts, false},
	}
	for _, tt := range tests {
		if got := equalList(tt.a, tt.b, tt.l); got != tt.want {
			t.Errorf("%s: equalList = %v, want %v", tt.name, got, tt.want)
		}
		if got := equalList(tt.b, tt.a, tt.l); got != tt.want {
			t.Errorf("%s (swapped): equalList = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Only what the host sees matters: the upstream name and the owner are
	// not compared (the exported name already implies the owner).
	b := mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`)
	b.lists[listTools][0].raw = "x.renamed"
	b.lists[listTools][1].server = "other"
	if !equalList(a, b, listTools) {
		t.Errorf("equalList compares fields the host never sees")
	}
	// A different list in b is reported for that list only.
	c := mk(listTools, "x", `{"name":"x"}`, "y", `{"name":"y"}`)
	c.lists[listResources] = []entry{{exported: "mcptrunk://s/r", item: json.RawMessage(`{}`)}}
	if !equalList(a, c, listTools) || equalList(a, c, listResources) {
		t.Errorf("equalList mixes lists up")
	}
}

// TestCatalogAssembled puts entries from several servers together the way
// buildCatalog does (without needing running upstreams) and checks that every exported tool and prompt routes
// back to its owner and upstream name, and every page lists them in order.
func TestCatalogAssembled(t *testing.T) {
	servers := map[string][]string{
		"files":   {"read", "write", "read.file", "read file", strings.Repeat("r", 100)},
		"weather": {"search", "forecast"},
		"notes":   {"search", "search.all"},
	}
	cat := &catalog{tools: map[string]map[string]string{}, prompts: map[string]map[string]string{}}
	for server, raws := range servers {
		tools, err := exportNamed(naming.Default, server, catItems("name", raws...), 64)
		if err != nil {
			t.Fatal(err)
		}
		cat.lists[listTools] = append(cat.lists[listTools], tools...)
		cat.tools[server] = routes(tools)
		cat.lists[listResources] = append(cat.lists[listResources],
			exportURIs(server, catItems("uri", "file:///"+server), "uri", slog.New(slog.DiscardHandler))...)
	}
	for l := range cat.lists {
		sortEntries(cat.lists[l])
	}
	pages := catWalk(t, listTools, 3, func(int) *catalog { return cat })
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
		raw, ok := cat.tools[server][name]
		if !ok || !slices.Contains(servers[server], raw) {
			t.Errorf("%q routes to %q on %q", name, raw, server)
		}
		if len(name) > 64 {
			t.Errorf("%q over budget", name)
		}
	}
	pages = catWalk(t, listResources, 1, func(int) *catalog { return cat })
	if len(pages) != 3 || pages[0][0] != "mcptrunk://files/file:///files" {
		t.Errorf("resources: %v", pages)
	}
}
