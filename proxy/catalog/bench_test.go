package catalog

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The trunk's own work per request: reading the exported name out of a
// tools/call, splicing the upstream name in, looking at the result for URIs
// to rewrite; and per tools/list, assembling a page of the catalog.

// callParams is a tools/call as the go-sdk client sends it through the trunk.
var callParams = json.RawMessage(`{"name":"mcp__notes__echo","arguments":{"text":"the quick brown fox jumps over the lazy dog"},"_meta":{"progressToken":42}}`)

func BenchmarkFieldSpan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, found, err := rawjson.FieldSpan(callParams, "name"); err != nil || !found {
			b.Fatal(found, err)
		}
	}
}

func BenchmarkStringField(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if name, err := rawjson.StringField(callParams, "name"); err != nil || name != "mcp__notes__echo" {
			b.Fatal(name, err)
		}
	}
}

func BenchmarkReplaceString(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rawjson.ReplaceString(callParams, "name", "echo"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRouteParams is what routeNamed does to the params of every
// tools/call: read the name, then replace it.
func BenchmarkRouteParams(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		name, err := rawjson.StringField(callParams, "name")
		if err != nil || name == "" {
			b.Fatal(name, err)
		}
		if _, err := rawjson.ReplaceString(callParams, "name", "echo"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNamespaceToolResult is the look at every tools/call result: a
// withUnprefixed text result (no URI: returned as is), and one with a resource link
// to rewrite.
func BenchmarkNamespaceToolResult(b *testing.B) {
	for _, tc := range []struct{ name, res string }{
		{"text", `{"content":[{"type":"text","text":"the quick brown fox jumps over the lazy dog"}]}`},
		{"resource_link", `{"content":[{"type":"text","text":"see the note"},{"type":"resource_link","uri":"notes://note/1","name":"note 1","mimeType":"text/withUnprefixed"}]}`},
		{"text1MB", `{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			res := json.RawMessage(tc.res)
			b.ReportAllocs()
			b.SetBytes(int64(len(res)))
			for b.Loop() {
				NamespaceToolResult("notes", res)
			}
		})
	}
}

// benchItems returns n tools shaped like mcptrunk-notes' filler tools.
func benchItems(server string, n int) []upstream.Item {
	items := make([]upstream.Item, n)
	for i := range items {
		name := fmt.Sprintf("extra_%03d", i)
		items[i] = upstream.Item{Key: name, Raw: json.RawMessage(`{"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},` +
			`"description":"Filler tool for large-catalogue benchmarks; returns its own name.",` +
			`"inputSchema":{"properties":{},"type":"object"},"name":"` + name + `"}`)}
	}
	return items
}

// benchCatalog is 20 servers of 50 tools each.
func benchCatalog(b *testing.B) *Catalog {
	cat := &Catalog{Scheme: naming.Default, Tools: map[string]map[string]string{}}
	for s := range 20 {
		server := fmt.Sprintf("n%02d", s+1)
		entries, err := exportNamed(naming.Default, server, benchItems(server, 50), nil, 64)
		if err != nil {
			b.Fatal(err)
		}
		cat.Lists[ListTools] = append(cat.Lists[ListTools], entries...)
		cat.Tools[server] = routes(entries)
	}
	return cat
}

// BenchmarkCatalogPage is one tools/list answer of 1,000 tools.
func BenchmarkCatalogPage(b *testing.B) {
	cat := benchCatalog(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := cat.Page(ListTools, "", 1000)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(res)))
	}
}

// BenchmarkExportNamed is the namespacing of one server's 50 tools, done
// for every server each time the catalog is rebuilt.
func BenchmarkExportNamed(b *testing.B) {
	items := benchItems("n01", 50)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := exportNamed(naming.Default, "n01", items, nil, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNameOwner is the owner lookup of every tools/call: in a catalog
// of namespaced servers only (the name is split), and in one with an
// unprefixed server too (its names are looked up first).
func BenchmarkNameOwner(b *testing.B) {
	cat := benchCatalog(b)
	withUnprefixed := benchCatalog(b)
	withUnprefixed.unprefixedIndex = &unprefixedIndex{servers: []string{"remote"}, unprefixed: map[string]bool{"remote": true}}
	for l := range withUnprefixed.unprefixedIndex.owners {
		withUnprefixed.unprefixedIndex.owners[l] = map[string]string{}
	}
	withUnprefixed.unprefixedIndex.add(ListTools, exportUnprefixed("remote", benchItems("remote", 50), nil))
	for server := range cat.Tools {
		withUnprefixed.unprefixedIndex.unprefixed[server] = false
	}
	for _, tc := range []struct {
		name, tool string
		cat        *Catalog
	}{
		{"namespaced", "mcp__n07__extra_042", cat},
		{"with-unprefixed/namespaced", "mcp__n07__extra_042", withUnprefixed},
		{"with-unprefixed/unprefixed", "extra_042", withUnprefixed},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := tc.cat.NameOwner(ListTools, tc.tool); !ok {
					b.Fatal(tc.tool)
				}
			}
		})
	}
}

// BenchmarkFittedBuild is building the catalog of 20 servers of 50 tools
// (build), and that and once more under Claude Code's budget
// (Catalog.Fitted: paid once per catalog by the first request of a host
// that prefixes; later requests find it built).
func BenchmarkFittedBuild(b *testing.B) {
	servers := make([]Server, 20)
	for s := range servers {
		name := fmt.Sprintf("n%02d", s+1)
		servers[s] = Server{Name: name, Spec: config.Spec{Name: name}, Items: upstream.Catalog{Tools: benchItems(name, 50)}, Listed: true, Settled: true}
	}
	in := Input{Servers: servers, Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}), Logger: slog.New(slog.DiscardHandler)}
	for _, budget := range []int{0, 52} {
		name := "build"
		if budget != 0 {
			name = "build+fitted"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if Build(in).Fitted(budget) == nil {
					b.Fatal("no catalog")
				}
			}
		})
	}
}
