package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

var catLists = []list{listTools, listPrompts, listResources, listTemplates}

// catWith returns a catalog whose list l holds one entry per name (in any
// order; catalogs keep their lists sorted), each item being
// {"<key>":"<name>","n":<i>} with the list's identifying key.
func catWith(l list, names ...string) *catalog {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	var cat catalog
	for i, n := range sorted {
		enc, _ := json.Marshal(n)
		item := fmt.Sprintf(`{%q:%s,"n":%d}`, listSpecs[l].key, enc, i)
		cat.lists[l] = append(cat.lists[l], entry{exported: n, server: "s", raw: n, item: json.RawMessage(item)})
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
func catDecode(t *testing.T, l list, raw json.RawMessage) catPage {
	t.Helper()
	if !json.Valid(raw) {
		t.Fatalf("page is not valid JSON: %s", raw)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("page is not an object: %s", raw)
	}
	field := listSpecs[l].field
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
		k, ok := it[listSpecs[l].key].(string)
		if !ok {
			t.Fatalf("item without %q: %v", listSpecs[l].key, it)
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
func catWalk(t *testing.T, l list, size int, current func(page int) *catalog) [][]string {
	t.Helper()
	var pages [][]string
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatalf("more than 1000 pages: cursors loop")
		}
		raw, err := current(i).page(l, cursor, size)
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
			raw, err := cat.page(l, "", size)
			if err != nil {
				t.Fatal(err)
			}
			p := catDecode(t, l, raw)
			want := []string{"mcp__a__y", "mcp__a__z", "mcp__b__x", "mcp__c__w"}
			if !slices.Equal(p.keys, want) || p.hasNext {
				t.Errorf("%s, size %d: got %v (next %v), want %v and no cursor", listSpecs[l].field, size, p.keys, p.hasNext, want)
			}
		}
	}
}

func TestCatalogPageExact(t *testing.T) {
	tests := []struct {
		l      list
		names  []string
		cursor string
		size   int
		want   string
	}{
		{listTools, nil, "", 0, `{"tools":[]}`},
		{listTools, nil, "", 5, `{"tools":[]}`},
		{listPrompts, nil, "", 0, `{"prompts":[]}`},
		{listResources, nil, "", 0, `{"resources":[]}`},
		{listTemplates, nil, "", 0, `{"resourceTemplates":[]}`},
		{listTools, []string{"c", "a", "b"}, "", 2, `{"tools":[{"name":"a","n":0},{"name":"b","n":1}],"nextCursor":"Yg"}`},
		{listTools, []string{"c", "a", "b"}, "Yg", 2, `{"tools":[{"name":"c","n":2}]}`},
		{listTools, []string{"c", "a", "b"}, "", 3, `{"tools":[{"name":"a","n":0},{"name":"b","n":1},{"name":"c","n":2}]}`},
		{listPrompts, []string{"p"}, "", 1, `{"prompts":[{"name":"p","n":0}]}`},
		{listResources, []string{"mcptrunk://s/b", "mcptrunk://s/a"}, "", 1,
			`{"resources":[{"uri":"mcptrunk://s/a","n":0}],"nextCursor":"bWNwdHJ1bms6Ly9zL2E"}`},
		{listTemplates, []string{"mcptrunk://s/r/{id}"}, "", 0, `{"resourceTemplates":[{"uriTemplate":"mcptrunk://s/r/{id}","n":0}]}`},
		// A cursor past every item: an empty last page.
		{listTools, []string{"a", "b"}, encodeCursor("zzz"), 1, `{"tools":[]}`},
		// A cursor before every item: the first page.
		{listTools, []string{"b", "c"}, encodeCursor("a"), 1, `{"tools":[{"name":"b","n":0}],"nextCursor":"Yg"}`},
	}
	for _, tt := range tests {
		got, err := catWith(tt.l, tt.names...).page(tt.l, tt.cursor, tt.size)
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
			t.Run(fmt.Sprintf("%s/size%d", listSpecs[l].field, size), func(t *testing.T) {
				pages := catWalk(t, l, size, func(int) *catalog { return cat })
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
			cats := []*catalog{catWith(listTools, base...)}
			for _, s := range tt.steps {
				cats = append(cats, catWith(listTools, s...))
			}
			pages := catWalk(t, listTools, tt.size, func(i int) *catalog {
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
			raw, err := catWith(listTools, names...).page(listTools, cursor, size)
			if err != nil {
				t.Fatal(err)
			}
			p := catDecode(t, listTools, raw)
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
	cat := catWith(listTools, "a", "b")
	for _, l := range catLists {
		for _, cursor := range []string{"!!!", "a", "YQ==", "not a cursor", "Pz5+"} {
			raw, err := cat.page(l, cursor, 1)
			if err == nil {
				t.Errorf("page(%s, %q) = %s, want an error", listSpecs[l].field, cursor, raw)
				continue
			}
			if raw != nil {
				t.Errorf("page(%s, %q) returned %s with its error", listSpecs[l].field, cursor, raw)
			}
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
				t.Errorf("page(%s, %q) error = %#v, want a *jsonrpc.Error with code -32602", listSpecs[l].field, cursor, err)
			}
		}
	}
}

func TestCatalogPageKeepsItemBytes(t *testing.T) {
	items := []string{
		"{\n  \"name\": \"mcp__s__a\",\n  \"inputSchema\": {\"type\": \"object\"}\n}",
		`{"name":"mcp__s__b","description":"\u00e9 \"q\" <&>","_meta":{"x":[1,2.50]}}`,
	}
	var cat catalog
	for _, it := range items {
		name, _ := stringField(json.RawMessage(it), "name")
		cat.lists[listTools] = append(cat.lists[listTools], entry{exported: name, server: "s", raw: name, item: json.RawMessage(it)})
	}
	got, err := cat.page(listTools, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[` + items[0] + `,` + items[1] + `]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

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

func catHash(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])[:8]
}

func catItems(key string, raws ...string) []upstream.Item {
	var items []upstream.Item
	for _, r := range raws {
		enc, _ := json.Marshal(r)
		items = append(items, upstream.Item{Key: r, Raw: json.RawMessage(`{"` + key + `":` + string(enc) + `,"description":"d"}`)})
	}
	return items
}

func TestExportNamed(t *testing.T) {
	long := strings.Repeat("abcdefghij", 10) // 100 characters
	tests := []struct {
		name string
		raws []string
		want map[string]string // raw -> exported
	}{
		{
			name: "legal names are kept",
			raws: []string{"read_file", "write-file", "X1"},
			want: map[string]string{"read_file": "mcp__files__read_file", "write-file": "mcp__files__write-file", "X1": "mcp__files__X1"},
		},
		{
			name: "a lossy name alone gets its sanitized form",
			raws: []string{"web.search"},
			want: map[string]string{"web.search": "mcp__files__web_search"},
		},
		{
			name: "collisions after sanitizing: the legal name keeps it, the others are hashed",
			raws: []string{"a.b", "a b", "a_b"},
			want: map[string]string{
				"a_b": "mcp__files__a_b",
				"a.b": "mcp__files__a_b_" + catHash("a.b"),
				"a b": "mcp__files__a_b_" + catHash("a b"),
			},
		},
		{
			name: "collisions between lossy names only",
			raws: []string{"x/y", "x:y"},
			want: map[string]string{
				"x/y": "mcp__files__x_y_" + catHash("x/y"),
				"x:y": "mcp__files__x_y_" + catHash("x:y"),
			},
		},
		{
			name: "a 100-character name is cut to the 64-character budget",
			raws: []string{long, "short"},
			want: map[string]string{
				long:    "mcp__files__" + long[:64-len("mcp__files__")-9] + "_" + catHash(long),
				"short": "mcp__files__short",
			},
		},
		{
			name: "unicode",
			raws: []string{"日本語"},
			want: map[string]string{"日本語": "mcp__files_____"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, err := exportNamed(naming.Default, "files", catItems("name", tt.raws...), 64)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(tt.raws) {
				t.Fatalf("%d entries for %d items", len(entries), len(tt.raws))
			}
			seen := map[string]bool{}
			for i, e := range entries {
				if e.raw != tt.raws[i] {
					t.Errorf("entry %d is %q, want the upstream order (%q)", i, e.raw, tt.raws[i])
				}
				if e.exported != tt.want[e.raw] {
					t.Errorf("%q exported as %q, want %q", e.raw, e.exported, tt.want[e.raw])
				}
				if seen[e.exported] {
					t.Errorf("%q exported twice", e.exported)
				}
				seen[e.exported] = true
				if len(e.exported) > 64 {
					t.Errorf("%q is %d characters, over the budget", e.exported, len(e.exported))
				}
				if e.server != "files" {
					t.Errorf("%q has server %q", e.raw, e.server)
				}
				enc, _ := json.Marshal(e.exported)
				if want := `{"name":` + string(enc) + `,"description":"d"}`; string(e.item) != want {
					t.Errorf("item %s, want %s", e.item, want)
				}
			}
			// Routing back: split the exported name, then the server's map.
			r := routes(entries)
			for raw, exported := range tt.want {
				server, _, ok := naming.SplitMCPName(exported)
				if !ok || server != "files" {
					t.Errorf("SplitMCPName(%q) = %q, %v", exported, server, ok)
				}
				if r[exported] != raw {
					t.Errorf("routes[%q] = %q, want %q", exported, r[exported], raw)
				}
			}
		})
	}
}

func TestExportNamedLongNameBudget(t *testing.T) {
	long := strings.Repeat("x", 100)
	entries, err := exportNamed(naming.Default, "srv", catItems("name", long), 0) // 0: the default 64
	if err != nil || len(entries) != 1 {
		t.Fatalf("exportNamed: %v, %v", entries, err)
	}
	e := entries[0]
	if len(e.exported) != 64 {
		t.Errorf("exported %q is %d characters, want exactly 64", e.exported, len(e.exported))
	}
	if got, _ := stringField(e.item, "name"); got != e.exported {
		t.Errorf("item name %q, want %q", got, e.exported)
	}
	// A bigger budget leaves the name alone.
	entries, err = exportNamed(naming.Default, "srv", catItems("name", long), 200)
	if err != nil || entries[0].exported != "mcp__srv__"+long {
		t.Errorf("budget 200: %v, %v", entries, err)
	}
}

func TestExportNamedDuplicatesAndErrors(t *testing.T) {
	// A server listing one name twice: the first item wins.
	items := []upstream.Item{
		{Key: "t", Raw: json.RawMessage(`{"name":"t","description":"first"}`)},
		{Key: "u", Raw: json.RawMessage(`{"name":"u"}`)},
		{Key: "t", Raw: json.RawMessage(`{"name":"t","description":"second"}`)},
	}
	entries, err := exportNamed(naming.Default, "s", items, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || string(entries[0].item) != `{"name":"mcp__s__t","description":"first"}` || string(entries[1].item) != `{"name":"mcp__s__u"}` {
		t.Errorf("duplicates: got %+v", entries)
	}

	// An item whose raw JSON has the name twice: upstream.itemKey reads the
	// last (encoding/json semantics), and the host must see no un-namespaced
	// name whichever occurrence its parser believes.
	raw := json.RawMessage(`{"name":"mcp__other__spoof","description":"d","name":"real"}`)
	var keyed struct{ Name string }
	if err := json.Unmarshal(raw, &keyed); err != nil {
		t.Fatal(err)
	}
	entries, err = exportNamed(naming.Default, "s", []upstream.Item{{Key: keyed.Name, Raw: raw}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"mcp__s__real","description":"d","name":"mcp__s__real"}`; string(entries[0].item) != want {
		t.Errorf("duplicate name field: item %s, want %s", entries[0].item, want)
	}

	// Items that are not objects are skipped (upstream never lets one through).
	entries, err = exportNamed(naming.Default, "s", []upstream.Item{{Key: "x", Raw: json.RawMessage(`["x"]`)}, {Key: "y", Raw: json.RawMessage(`{"name":"y"}`)}}, 0)
	if err != nil || len(entries) != 1 || entries[0].exported != "mcp__s__y" {
		t.Errorf("non-object item: %+v, %v", entries, err)
	}

	// No items: no entries, no error.
	if entries, err := exportNamed(naming.Default, "s", nil, 0); err != nil || len(entries) != 0 {
		t.Errorf("no items: %+v, %v", entries, err)
	}

	// A server id that cannot be split back, and a budget with no room.
	for _, tc := range []struct {
		server string
		maxLen int
	}{{"a__b", 0}, {"", 0}, {"bad_", 0}, {"files", 20}, {strings.Repeat("s", 50), 64}} {
		if _, err := exportNamed(naming.Default, tc.server, catItems("name", "t"), tc.maxLen); err == nil {
			t.Errorf("exportNamed(%q, _, %d) succeeded, want an error", tc.server, tc.maxLen)
		}
	}
}

func TestExportURIs(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))

	res := []upstream.Item{
		{Key: "file:///a.txt", Raw: json.RawMessage(`{"uri":"file:///a.txt","name":"a","annotations":{"uri":"keep"}}`)},
		{Key: "demo://r?x=1&y=2", Raw: json.RawMessage(`{"name":"r","uri":"demo://r?x=1&y=2"}`)},
		{Key: "bad", Raw: json.RawMessage(`"bad"`)},
	}
	got := exportURIs("files", res, "uri", logger)
	want := []entry{
		{exported: "mcptrunk://files/file:///a.txt", server: "files", raw: "file:///a.txt",
			item: json.RawMessage(`{"uri":"mcptrunk://files/file:///a.txt","name":"a","annotations":{"uri":"keep"}}`)},
		{exported: "mcptrunk://files/demo://r?x=1&y=2", server: "files", raw: "demo://r?x=1&y=2",
			item: json.RawMessage(`{"name":"r","uri":"mcptrunk://files/demo://r?x=1\u0026y=2"}`)},
	}
	catCompareEntries(t, got, want)
	if !strings.Contains(logs.String(), "skipping a resource") || !strings.Contains(logs.String(), "bad") {
		t.Errorf("the skipped resource was not logged: %s", logs.String())
	}

	tmpl := []upstream.Item{
		{Key: "demo://r/{id}", Raw: json.RawMessage("{\n \"uriTemplate\": \"demo://r/{id}\",\n \"name\": \"r\"\n}")},
	}
	got = exportURIs("files", tmpl, "uriTemplate", logger)
	want = []entry{
		{exported: "mcptrunk://files/demo://r/{id}", server: "files", raw: "demo://r/{id}",
			item: json.RawMessage("{\n \"uriTemplate\": \"mcptrunk://files/demo://r/{id}\",\n \"name\": \"r\"\n}")},
	}
	catCompareEntries(t, got, want)
	for _, e := range got {
		server, uri, ok := naming.SplitResourceURI(e.exported)
		if !ok || server != "files" || uri != e.raw {
			t.Errorf("SplitResourceURI(%q) = %q, %q, %v", e.exported, server, uri, ok)
		}
	}

	// A URI listed twice is exported once, the first entry winning, as in
	// exportNamed: a duplicate would make a cursor skip its twin.
	dup := []upstream.Item{
		{Key: "x://1", Raw: json.RawMessage(`{"uri":"x://1"}`)},
		{Key: "x://1", Raw: json.RawMessage(`{"uri":"x://1","name":"again"}`)},
	}
	if got := exportURIs("s", dup, "uri", logger); len(got) != 1 || string(got[0].item) != `{"uri":"mcptrunk://s/x://1"}` {
		t.Errorf("duplicate URIs: got %d entries: %+v", len(got), got)
	}
}

func catCompareEntries(t *testing.T, got, want []entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.exported != w.exported || g.server != w.server || g.raw != w.raw || string(g.item) != string(w.item) {
			t.Errorf("entry %d:\n got %q %q %q %s\nwant %q %q %q %s", i, g.exported, g.server, g.raw, g.item, w.exported, w.server, w.raw, w.item)
		}
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

// TestExportNamedScheme checks that another prefix (trunk.prefix) changes
// the names, the budget still holds, and names split back in that scheme.
func TestExportNamedScheme(t *testing.T) {
	long := strings.Repeat("y", 100)
	for _, scheme := range []naming.Scheme{{Prefix: ""}, {Prefix: "t_"}, naming.Default} {
		entries, err := exportNamed(scheme, "files", catItems("name", "read", "read.me", long), 64)
		if err != nil {
			t.Fatalf("prefix %q: %v", scheme.Prefix, err)
		}
		r := routes(entries)
		for _, e := range entries {
			if !strings.HasPrefix(e.exported, scheme.Prefix+"files__") || len(e.exported) > 64 {
				t.Errorf("prefix %q: %q", scheme.Prefix, e.exported)
			}
			server, _, ok := scheme.Split(e.exported)
			if !ok || server != "files" || r[e.exported] != e.raw {
				t.Errorf("prefix %q: %q splits to %q, %v and routes to %q, want %q", scheme.Prefix, e.exported, server, ok, r[e.exported], e.raw)
			}
			if got, _ := stringField(e.item, "name"); got != e.exported {
				t.Errorf("prefix %q: item name %q, want %q", scheme.Prefix, got, e.exported)
			}
		}
		if want := scheme.Prefix + "files__read"; entries[0].exported != want {
			t.Errorf("prefix %q: %q, want %q", scheme.Prefix, entries[0].exported, want)
		}
		if len(entries[2].exported) != 64 {
			t.Errorf("prefix %q: long name %q is not cut to exactly 64", scheme.Prefix, entries[2].exported)
		}
	}
}

// The first page is built once per catalog and is the same as page's.
func TestCatalogFirstPageCached(t *testing.T) {
	names := []string{"mcp__b__x", "mcp__a__z", "mcp__a__y"}
	for _, l := range catLists {
		cat := catWith(l, names...)
		want, err := cat.page(l, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		first, err := cat.firstPage(l, 2)
		if err != nil || string(first) != string(want) {
			t.Fatalf("%s: firstPage = %s, %v; want %s", listSpecs[l].field, first, err, want)
		}
		again, _ := cat.firstPage(l, 2)
		if &again[0] != &first[0] {
			t.Errorf("%s: the first page was built twice", listSpecs[l].field)
		}
	}
}
