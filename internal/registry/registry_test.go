package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// TestSearchPages: a search reads every page by its cursor, and matches
// descriptions too.
func TestSearchPages(t *testing.T) {
	reg := testkit.StartRegistry(t, 2)
	c := &Client{Base: reg.URL}
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := c.Search(context.Background(), "", 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Servers {
			names = append(names, e.Server.Name)
		}
		if cursor = p.Meta.NextCursor; cursor == "" {
			if pages < 2 {
				t.Errorf("%d pages of 2 for %d servers", pages+1, len(names))
			}
			break
		}
	}
	if len(names) != 6 {
		t.Errorf("servers %q, want the 6 documents", names)
	}
	p, err := c.Search(context.Background(), "forecasts", 10, "")
	if err != nil || len(p.Servers) != 1 || p.Servers[0].Server.Name != "io.github.example/weather" || p.Servers[0].Status() != "active" {
		t.Errorf("search by description: %+v, %v", p, err)
	}
}

// TestGet: a version, the latest, and a name or version the registry does
// not have (a NotFoundError naming it).
func TestGet(t *testing.T) {
	reg := testkit.StartRegistry(t, 10)
	c := &Client{Base: reg.URL}
	e, err := c.Get(context.Background(), "io.github.example/sqlite", "")
	if err != nil || e.Server.Version != "0.9.0" || e.Status() != "deprecated" {
		t.Fatalf("latest: %+v, %v", e, err)
	}
	if _, err := c.Get(context.Background(), "io.github.example/sqlite", "0.9.0"); err != nil {
		t.Errorf("by version: %v", err)
	}
	var nf *NotFoundError
	if _, err := c.Get(context.Background(), "io.github.example/nothing", ""); !errors.As(err, &nf) || nf.Error() != `the registry has no server named "io.github.example/nothing"` {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := c.Get(context.Background(), "io.github.example/sqlite", "9.9.9"); !errors.As(err, &nf) || nf.Version != "9.9.9" {
		t.Errorf("unknown version: %v", err)
	}
}

// TestSearchUpTo: pages are read until the limit, which may end inside a
// page, and more says whether the registry has others.
func TestSearchUpTo(t *testing.T) {
	reg := testkit.StartRegistry(t, 2)
	c := &Client{Base: reg.URL}
	for _, tc := range []struct {
		limit int
		more  bool
	}{{3, true}, {5, true}, {6, false}, {30, false}} {
		found, more, err := c.SearchUpTo(context.Background(), "", tc.limit)
		if err != nil || len(found) != min(tc.limit, 6) || more != tc.more {
			t.Errorf("limit %d: %d servers, more %v, %v; want %d, %v", tc.limit, len(found), more, err, min(tc.limit, 6), tc.more)
		}
	}
}
