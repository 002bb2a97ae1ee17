package catalog

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Build takes values only: servers that are not listed export nothing,
// an unprefixed server keeps its names, the first server to claim a name
// keeps it and the later one's item is a conflict, and every exported name
// routes back to its owner.
func TestBuildFromValues(t *testing.T) {
	tools := func(names ...string) upstream.Catalog { return upstream.Catalog{Tools: catItems("name", names...)} }
	in := Input{
		Servers: []Server{
			{Name: "alpha", Spec: config.Spec{Name: "alpha", Namespace: new(bool)}, Items: tools("echo", "only.alpha"), Listed: true, Settled: true},
			{Name: "beta", Spec: config.Spec{Name: "beta", Namespace: new(bool)}, Items: tools("echo"), Listed: true, Settled: true},
			{Name: "down", Spec: config.Spec{Name: "down"}, Items: tools("lost")},
			{Name: "notes", Spec: config.Spec{Name: "notes"}, Items: tools("search"), Listed: true},
		},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	}
	cat := Build(in)
	var names []string
	for _, e := range cat.Lists[ListTools] {
		names = append(names, e.Exported)
	}
	want := []string{"echo", naming.Default.Name("notes", "search"), "only.alpha"}
	if len(names) != len(want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("tools %v, want %v", names, want)
		}
	}
	if len(cat.Conflicts) != 1 || cat.Conflicts[0].Server != "beta" || cat.Conflicts[0].Owner != "alpha" {
		t.Errorf("conflicts %+v, want beta's echo withheld for alpha's", cat.Conflicts)
	}
	for name, server := range map[string]string{"echo": "alpha", "only.alpha": "alpha", naming.Default.Name("notes", "search"): "notes"} {
		if got, ok := cat.NameOwner(ListTools, name); !ok || got != server {
			t.Errorf("NameOwner(%q) = %q, %v; want %q", name, got, ok, server)
		}
	}
	if _, err := json.Marshal(cat.Conflicts); err != nil {
		t.Fatal(err)
	}
}
