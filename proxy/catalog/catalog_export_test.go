package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

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
			entries, err := exportNamed(naming.Default, "files", catItems("name", tt.raws...), nil, 64)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(tt.raws) {
				t.Fatalf("%d entries for %d items", len(entries), len(tt.raws))
			}
			seen := map[string]bool{}
			for i, e := range entries {
				if e.Raw != tt.raws[i] {
					t.Errorf("entry %d is %q, want the upstream order (%q)", i, e.Raw, tt.raws[i])
				}
				if e.Exported != tt.want[e.Raw] {
					t.Errorf("%q exported as %q, want %q", e.Raw, e.Exported, tt.want[e.Raw])
				}
				if seen[e.Exported] {
					t.Errorf("%q exported twice", e.Exported)
				}
				seen[e.Exported] = true
				if len(e.Exported) > 64 {
					t.Errorf("%q is %d characters, over the budget", e.Exported, len(e.Exported))
				}
				if e.Server != "files" {
					t.Errorf("%q has server %q", e.Raw, e.Server)
				}
				enc, _ := json.Marshal(e.Exported)
				if want := `{"name":` + string(enc) + `,"description":"d"}`; string(e.Item) != want {
					t.Errorf("item %s, want %s", e.Item, want)
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
	entries, err := exportNamed(naming.Default, "srv", catItems("name", long), nil, 0) // 0: the default 64
	if err != nil || len(entries) != 1 {
		t.Fatalf("exportNamed: %v, %v", entries, err)
	}
	e := entries[0]
	if len(e.Exported) != 64 {
		t.Errorf("exported %q is %d characters, want exactly 64", e.Exported, len(e.Exported))
	}
	if got, _ := rawjson.StringField(e.Item, "name"); got != e.Exported {
		t.Errorf("item name %q, want %q", got, e.Exported)
	}
	// A bigger budget leaves the name alone.
	entries, err = exportNamed(naming.Default, "srv", catItems("name", long), nil, 200)
	if err != nil || entries[0].Exported != "mcp__srv__"+long {
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
	entries, err := exportNamed(naming.Default, "s", items, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || string(entries[0].Item) != `{"name":"mcp__s__t","description":"first"}` || string(entries[1].Item) != `{"name":"mcp__s__u"}` {
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
	entries, err = exportNamed(naming.Default, "s", []upstream.Item{{Key: keyed.Name, Raw: raw}}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"mcp__s__real","description":"d","name":"mcp__s__real"}`; string(entries[0].Item) != want {
		t.Errorf("duplicate name field: item %s, want %s", entries[0].Item, want)
	}

	// Items that are not objects are skipped (upstream never lets one through).
	entries, err = exportNamed(naming.Default, "s", []upstream.Item{{Key: "x", Raw: json.RawMessage(`["x"]`)}, {Key: "y", Raw: json.RawMessage(`{"name":"y"}`)}}, nil, 0)
	if err != nil || len(entries) != 1 || entries[0].Exported != "mcp__s__y" {
		t.Errorf("non-object item: %+v, %v", entries, err)
	}

	// No items: no entries, no error.
	if entries, err := exportNamed(naming.Default, "s", nil, nil, 0); err != nil || len(entries) != 0 {
		t.Errorf("no items: %+v, %v", entries, err)
	}

	// A server id that cannot be split back, and a budget with no room.
	for _, tc := range []struct {
		server string
		maxLen int
	}{{"a__b", 0}, {"", 0}, {"bad_", 0}, {"files", 20}, {strings.Repeat("s", 50), 64}} {
		if _, err := exportNamed(naming.Default, tc.server, catItems("name", "t"), nil, tc.maxLen); err == nil {
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
	want := []Entry{
		{Exported: "mcptrunk://files/file:///a.txt", Server: "files", Raw: "file:///a.txt",
			Item: json.RawMessage(`{"uri":"mcptrunk://files/file:///a.txt","name":"a","annotations":{"uri":"keep"}}`)},
		{Exported: "mcptrunk://files/demo://r?x=1&y=2", Server: "files", Raw: "demo://r?x=1&y=2",
			Item: json.RawMessage(`{"name":"r","uri":"mcptrunk://files/demo://r?x=1\u0026y=2"}`)},
	}
	catCompareEntries(t, got, want)
	if !strings.Contains(logs.String(), "skipping a resource") || !strings.Contains(logs.String(), "bad") {
		t.Errorf("the skipped resource was not logged: %s", logs.String())
	}

	tmpl := []upstream.Item{
		{Key: "demo://r/{id}", Raw: json.RawMessage("{\n \"uriTemplate\": \"demo://r/{id}\",\n \"name\": \"r\"\n}")},
	}
	got = exportURIs("files", tmpl, "uriTemplate", logger)
	want = []Entry{
		{Exported: "mcptrunk://files/demo://r/{id}", Server: "files", Raw: "demo://r/{id}",
			Item: json.RawMessage("{\n \"uriTemplate\": \"mcptrunk://files/demo://r/{id}\",\n \"name\": \"r\"\n}")},
	}
	catCompareEntries(t, got, want)
	for _, e := range got {
		server, uri, ok := naming.SplitResourceURI(e.Exported)
		if !ok || server != "files" || uri != e.Raw {
			t.Errorf("SplitResourceURI(%q) = %q, %q, %v", e.Exported, server, uri, ok)
		}
	}

	// A URI listed twice is exported once, the first entry winning, as in
	// exportNamed: a duplicate would make a cursor skip its twin.
	dup := []upstream.Item{
		{Key: "x://1", Raw: json.RawMessage(`{"uri":"x://1"}`)},
		{Key: "x://1", Raw: json.RawMessage(`{"uri":"x://1","name":"again"}`)},
	}
	if got := exportURIs("s", dup, "uri", logger); len(got) != 1 || string(got[0].Item) != `{"uri":"mcptrunk://s/x://1"}` {
		t.Errorf("duplicate URIs: got %d entries: %+v", len(got), got)
	}
}

func catCompareEntries(t *testing.T, got, want []Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Exported != w.Exported || g.Server != w.Server || g.Raw != w.Raw || string(g.Item) != string(w.Item) {
			t.Errorf("entry %d:\n got %q %q %q %s\nwant %q %q %q %s", i, g.Exported, g.Server, g.Raw, g.Item, w.Exported, w.Server, w.Raw, w.Item)
		}
	}
}

// TestExportNamedScheme checks that another prefix (trunk.prefix) changes
// the names, the budget still holds, and names split back in that scheme.
func TestExportNamedScheme(t *testing.T) {
	long := strings.Repeat("y", 100)
	for _, scheme := range []naming.Scheme{{Prefix: ""}, {Prefix: "t_"}, naming.Default} {
		entries, err := exportNamed(scheme, "files", catItems("name", "read", "read.me", long), nil, 64)
		if err != nil {
			t.Fatalf("prefix %q: %v", scheme.Prefix, err)
		}
		r := routes(entries)
		for _, e := range entries {
			if !strings.HasPrefix(e.Exported, scheme.Prefix+"files__") || len(e.Exported) > 64 {
				t.Errorf("prefix %q: %q", scheme.Prefix, e.Exported)
			}
			server, _, ok := scheme.Split(e.Exported)
			if !ok || server != "files" || r[e.Exported] != e.Raw {
				t.Errorf("prefix %q: %q splits to %q, %v and routes to %q, want %q", scheme.Prefix, e.Exported, server, ok, r[e.Exported], e.Raw)
			}
			if got, _ := rawjson.StringField(e.Item, "name"); got != e.Exported {
				t.Errorf("prefix %q: item name %q, want %q", scheme.Prefix, got, e.Exported)
			}
		}
		if want := scheme.Prefix + "files__read"; entries[0].Exported != want {
			t.Errorf("prefix %q: %q, want %q", scheme.Prefix, entries[0].Exported, want)
		}
		if len(entries[2].Exported) != 64 {
			t.Errorf("prefix %q: long name %q is not cut to exactly 64", scheme.Prefix, entries[2].Exported)
		}
	}
}
