package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

var catLists = []List{ListTools, ListPrompts, ListResources, ListTemplates}

// catWith returns a catalog whose list l holds one entry per name (in any
// order; catalogs keep their lists sorted), each item being
// {"<key>":"<name>","n":<i>} with the list's identifying key.
func catWith(l List, names ...string) *Catalog {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	var cat Catalog
	for i, n := range sorted {
		enc, _ := json.Marshal(n)
		item := fmt.Sprintf(`{%q:%s,"n":%d}`, Specs[l].Key, enc, i)
		cat.Lists[l] = append(cat.Lists[l], Entry{Exported: n, Server: "s", Raw: n, Item: json.RawMessage(item)})
	}
	return &cat
}

// catPage is a decoded page: the identifying key of each item, and the
// cursor, if any.
type catPage struct {
	keys    []string
	next    string
	hasNext bool
}

// catDecode checks that raw is a well-formed page of list l and decodes it.
func catDecode(t *testing.T, l List, raw json.RawMessage) catPage {
	t.Helper()
	if !json.Valid(raw) {
		t.Fatalf("page is not valid JSON: %s", raw)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("page is not an object: %s", raw)
	}
	field := Specs[l].Field
	for k := range fields {
		if k != field && k != "nextCursor" {
			t.Fatalf("page has unexpected field %q: %s", k, raw)
		}
	}
	arr, ok := fields[field]
	if !ok {
		t.Fatalf("page has no %q field: %s", field, raw)
	}
	var items []map[string]any
	if err := json.Unmarshal(arr, &items); err != nil || items == nil {
		t.Fatalf("field %q is not an array of objects: %s", field, arr)
	}
	var p catPage
	for _, it := range items {
		k, ok := it[Specs[l].Key].(string)
		if !ok {
			t.Fatalf("item without %q: %v", Specs[l].Key, it)
		}
		p.keys = append(p.keys, k)
	}
	if c, ok := fields["nextCursor"]; ok {
		if err := json.Unmarshal(c, &p.next); err != nil || p.next == "" {
			t.Fatalf("nextCursor %s is not a non-empty string", c)
		}
		p.hasNext = true
	}
	return p
}

// catWalk follows cursors from the first page to the last, asking current
// for the catalog before each page, and returns what each page held.
func catWalk(t *testing.T, l List, size int, current func(page int) *Catalog) [][]string {
	t.Helper()
	var pages [][]string
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatalf("more than 1000 pages: cursors loop")
		}
		raw, err := current(i).Page(l, cursor, size)
		if err != nil {
			t.Fatalf("page %d (cursor %q): %v", i, cursor, err)
		}
		p := catDecode(t, l, raw)
		pages = append(pages, p.keys)
		if !p.hasNext {
			return pages
		}
		if len(p.keys) == 0 {
			t.Fatalf("page %d is empty but has a nextCursor", i)
		}
		cursor = p.next
	}
}

func TestCatalogPageAll(t *testing.T) {
	names := []string{"mcp__b__x", "mcp__a__z", "mcp__a__y", "mcp__c__w"}
	for _, l := range catLists {
		cat := catWith(l, names...)
		for _, size := range []int{0, -1, -1000} {
			raw, err := cat.Page(l, "", size)
			if err != nil {
				t.Fatal(err)
			}
			p := catDecode(t, l, raw)
			want := []string{"mcp__a__y", "mcp__a__z", "mcp__b__x", "mcp__c__w"}
			if !slices.Equal(p.keys, want) || p.hasNext {
				t.Errorf("%s, size %d: got %v (next %v), want %v and no cursor", Specs[l].Field, size, p.keys, p.hasNext, want)
			}
		}
	}
}

func TestCatalogPageExact(t *testing.T) {
	tests := []struct {
		l      List
		names  []string
		cursor string
		size   int
		want   string
	}{
		{ListTools, nil, "", 0, `{"tools":[]}`},
		{ListTools, nil, "", 5, `{"tools":[]}`},
		{ListPrompts, nil, "", 0, `{"prompts":[]}`},
		{ListResources, nil, "", 0, `{"resources":[]}`},
		{ListTemplates, nil, "", 0, `{"resourceTemplates":[]}`},
		{ListTools, []string{"c", "a", "b"}, "", 2, `{"tools":[{"name":"a","n":0},{"name":"b","n":1}],"nextCursor":"Yg"}`},
		{ListTools, []string{"c", "a", "b"}, "Yg", 2, `{"tools":[{"name":"c","n":2}]}`},
		{ListTools, []string{"c", "a", "b"}, "", 3, `{"tools":[{"name":"a","n":0},{"name":"b","n":1},{"name":"c","n":2}]}`},
		{ListPrompts, []string{"p"}, "", 1, `{"prompts":[{"name":"p","n":0}]}`},
		{ListResources, []string{"mcptrunk://s/b", "mcptrunk://s/a"}, "", 1,
			`{"resources":[{"uri":"mcptrunk://s/a","n":0}],"nextCursor":"bWNwdHJ1bms6Ly9zL2E"}`},
		{ListTemplates, []string{"mcptrunk://s/r/{id}"}, "", 0, `{"resourceTemplates":[{"uriTemplate":"mcptrunk://s/r/{id}","n":0}]}`},
		// A cursor past every item: an empty last page.
		{ListTools, []string{"a", "b"}, encodeCursor("zzz"), 1, `{"tools":[]}`},
		// A cursor before every item: the first page.
		{ListTools, []string{"b", "c"}, encodeCursor("a"), 1, `{"tools":[{"name":"b","n":0}],"nextCursor":"Yg"}`},
	}
	for _, tt := range tests {
		got, err := catWith(tt.l, tt.names...).Page(tt.l, tt.cursor, tt.size)
		if err != nil {
			t.Errorf("page(%v, %q, %d): %v", tt.names, tt.cursor, tt.size, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("page(%v, %q, %d)\n got %s\nwant %s", tt.names, tt.cursor, tt.size, got, tt.want)
		}
	}
}

func TestCatalogPageWalk(t *testing.T) {
	names := []string{
		"mcp__zeta__last", "mcp__alpha__b", "mcp__alpha__a", "mcp__alpha__a_1",
		"mcp__beta__x", "mcp__alpha__A", "mcp__beta__x-y", "mcp__gamma__q",
	}
	want := slices.Clone(names)
	slices.Sort(want)
	n := len(names)
	for _, l := range catLists {
		cat := catWith(l, names...)
		for _, size := range []int{1, 2, 3, n - 1, n, n + 1, 0} {
			t.Run(fmt.Sprintf("%s/size%d", Specs[l].Field, size), func(t *testing.T) {
				pages := catWalk(t, l, size, func(int) *Catalog { return cat })
				wantPages := 1
				if size > 0 {
					wantPages = (n + size - 1) / size
				}
				if len(pages) != wantPages {
					t.Errorf("%d pages, want %d", len(pages), wantPages)
				}
				var all []string
				for i, p := range pages {
					if size > 0 && len(p) > size {
						t.Errorf("page %d has %d items, more than %d", i, len(p), size)
					}
					if size > 0 && i < len(pages)-1 && len(p) != size {
						t.Errorf("page %d has %d items, want a full page of %d", i, len(p), size)
					}
					all = append(all, p...)
				}
				if !slices.Equal(all, want) {
					t.Errorf("walked %v\nwant   %v", all, want)
				}
			})
		}
	}
}

// TestCatalogPageCursorSurvivesChanges serves each page from a different
// catalog, as happens when servers come and go between a host's requests.
func TestCatalogPageCursorSurvivesChanges(t *testing.T) {
	base := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	tests := []struct {
		name string
		size int
		// the catalog for each page after the first; the last one repeats
		steps [][]string
		want  []string
	}{
		{
			name: "item named by the cursor removed",
			size: 2,
			steps: [][]string{
				{"a", "c", "d", "e", "f", "g", "h", "i", "j"},
			},
			want: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
		},
		{
			name: "insertions before and after the cursor",
			size: 3,
			steps: [][]string{
				{"0", "a", "b", "bb", "c", "d", "dd", "e", "f", "g", "h", "i", "j", "k"},
			},
			// "0" and "bb" sort before the cursor "c": the host learns of them
			// through list_changed, not this walk.
			want: []string{"a", "b", "c", "d", "dd", "e", "f", "g", "h", "i", "j", "k"},
		},
		{
			name: "removals everywhere",
			size: 2,
			steps: [][]string{
				{"a", "b", "d", "f", "g", "h", "i", "j"},
				{"b", "f", "g", "i", "j"},
				{"j"},
			},
			// pages: [a b] from the first catalog, [d f] after b, [g i]
			// after f, [j] after i.
			want: []string{"a", "b", "d", "f", "g", "i", "j"},
		},
		{
			name: "everything after the cursor removed",
			size: 4,
			steps: [][]string{
				{"a", "b"},
			},
			want: []string{"a", "b", "c", "d"},
		},
		{
			name: "catalog emptied",
			size: 3,
			steps: [][]string{
				{},
			},
			want: []string{"a", "b", "c"},
		},
		{
			name: "a whole server appears in the middle",
			size: 2,
			steps: [][]string{
				{"a", "b", "c", "d", "e", "e1", "e2", "e3", "f", "g", "h", "i", "j"},
			},
			want: []string{"a", "b", "c", "d", "e", "e1", "e2", "e3", "f", "g", "h", "i", "j"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cats := []*Catalog{catWith(ListTools, base...)}
			for _, s := range tt.steps {
				cats = append(cats, catWith(ListTools, s...))
			}
			pages := catWalk(t, ListTools, tt.size, func(i int) *Catalog {
				return cats[min(i, len(cats)-1)]
			})
			var all []string
			for _, p := range pages {
				all = append(all, p...)
			}
			if !slices.Equal(all, tt.want) {
				t.Errorf("walked %v\nwant   %v", all, tt.want)
			}
		})
	}
}

// TestCatalogPageCursorRandomChanges changes the catalog at random between
// pages and checks the guarantees: strictly increasing order (so no
// duplicates), every item present throughout the walk seen, and every item
// seen present in the catalog its page came from.
func TestCatalogPageCursorRandomChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		universe := make([]string, 40)
		for i := range universe {
			universe[i] = fmt.Sprintf("mcp__s%d__t%02d", i%3, i)
		}
		pick := func() map[string]bool {
			m := map[string]bool{}
			for _, u := range universe {
				if rng.IntN(3) > 0 {
					m[u] = true
				}
			}
			return m
		}
		size := 1 + rng.IntN(7)
		throughout := map[string]bool{}
		for _, u := range universe {
			throughout[u] = true
		}
		served := map[string]bool{}
		var all []string
		cursor := ""
		for page := 0; ; page++ {
			if page > len(universe)+1 {
				t.Fatalf("round %d: too many pages", round)
			}
			set := pick()
			for u := range throughout {
				if !set[u] {
					delete(throughout, u)
				}
			}
			var names []string
			for u := range set {
				names = append(names, u)
			}
			raw, err := catWith(ListTools, names...).Page(ListTools, cursor, size)
			if err != nil {
				t.Fatal(err)
			}
			p := catDecode(t, ListTools, raw)
			if len(p.keys) > size {
				t.Fatalf("round %d: page of %d items, size %d", round, len(p.keys), size)
			}
			for _, k := range p.keys {
				if !set[k] {
					t.Fatalf("round %d: %q served from a catalog without it", round, k)
				}
				served[k] = true
			}
			all = append(all, p.keys...)
			if !p.hasNext {
				break
			}
			cursor = p.next
		}
		for i := 1; i < len(all); i++ {
			if all[i-1] >= all[i] {
				t.Fatalf("round %d: order broken or duplicate at %d: %v", round, i, all)
			}
		}
		for u := range throughout {
			if !served[u] {
				t.Fatalf("round %d: %q was there throughout but skipped: %v", round, u, all)
			}
		}
	}
}

func TestCatalogPageInvalidCursor(t *testing.T) {
	cat := catWith(ListTools, "a", "b")
	for _, l := range catLists {
		for _, cursor := range []string{"!!!", "a", "YQ==", "not a cursor", "Pz5+"} {
			raw, err := cat.Page(l, cursor, 1)
			if err == nil {
				t.Errorf("page(%s, %q) = %s, want an error", Specs[l].Field, cursor, raw)
				continue
			}
			if raw != nil {
				t.Errorf("page(%s, %q) returned %s with its error", Specs[l].Field, cursor, raw)
			}
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
				t.Errorf("page(%s, %q) error = %#v, want a *jsonrpc.Error with code -32602", Specs[l].Field, cursor, err)
			}
		}
	}
}

func TestCatalogPageKeepsItemBytes(t *testing.T) {
	items := []string{
		"{\n  \"name\": \"mcp__s__a\",\n  \"inputSchema\": {\"type\": \"object\"}\n}",
		`{"name":"mcp__s__b","description":"\u00e9 \"q\" <&>","_meta":{"x":[1,2.50]}}`,
	}
	var cat Catalog
	for _, it := range items {
		name, _ := rawjson.StringField(json.RawMessage(it), "name")
		cat.Lists[ListTools] = append(cat.Lists[ListTools], Entry{Exported: name, Server: "s", Raw: name, Item: json.RawMessage(it)})
	}
	got, err := cat.Page(ListTools, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[` + items[0] + `,` + items[1] + `]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// The first page is built once per catalog and is the same as page's.
func TestCatalogFirstPageCached(t *testing.T) {
	names := []string{"mcp__b__x", "mcp__a__z", "mcp__a__y"}
	for _, l := range catLists {
		cat := catWith(l, names...)
		want, err := cat.Page(l, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		first, err := cat.FirstPage(l, 2)
		if err != nil || string(first) != string(want) {
			t.Fatalf("%s: FirstPage = %s, %v; want %s", Specs[l].Field, first, err, want)
		}
		again, _ := cat.FirstPage(l, 2)
		if &again[0] != &first[0] {
			t.Errorf("%s: the first page was built twice", Specs[l].Field)
		}
	}
}

// A page is written into a buffer of its own size (the first page is kept
// with its catalog): at most a few bytes over, never the up to twice its
// length a buffer grown by doubling keeps.
func TestCatalogPageSizedToFit(t *testing.T) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("mcp__s%02d__tool_with_a_longer_name_%04d", i%20, i)
	}
	for _, l := range catLists {
		cat := catWith(l, names...)
		for _, size := range []int{0, 1, 999} {
			page, err := cat.Page(l, "", size)
			if err != nil {
				t.Fatal(err)
			}
			if cap(page)-len(page) > 64 {
				t.Errorf("%s, size %d: a page of %d bytes holds a buffer of %d", Specs[l].Field, size, len(page), cap(page))
			}
		}
	}
}
