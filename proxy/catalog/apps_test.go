package catalog

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The ui:// URIs of MCP Apps, rewritten wherever one stands. The server in
// these tables is "files" (urisRun's), so ui://get-time/mcp-app.html is
// exported as ui://files/get-time/mcp-app.html; the rest of _meta.ui passes
// byte for byte.

func TestNamespaceAppMetaTool(t *testing.T) {
	urisRun(t, namespaceAppMeta, []urisCase{
		{
			name: "nested resourceUri, csp visibility and the rest untouched",
			in:   `{"name":"get-time","_meta":{"ui":{"resourceUri":"ui://get-time/mcp-app.html","csp":{"connectDomains":["https://x"]},"permissions":{"camera":{}},"visibility":["model","app"],"prefersBorder":true}}}`,
			want: `{"name":"get-time","_meta":{"ui":{"resourceUri":"ui://files/get-time/mcp-app.html","csp":{"connectDomains":["https://x"]},"permissions":{"camera":{}},"visibility":["model","app"],"prefersBorder":true}}}`,
		},
		{
			name: "the older flat key",
			in:   `{"name":"t","_meta":{"ui/resourceUri":"ui://mcp-app.html"}}`,
			want: `{"name":"t","_meta":{"ui/resourceUri":"ui://files/mcp-app.html"}}`,
		},
		{
			name: "both keys",
			in:   `{"_meta":{"ui":{"resourceUri":"ui://a/x.html"},"ui/resourceUri":"ui://a/x.html"},"name":"t"}`,
			want: `{"_meta":{"ui":{"resourceUri":"ui://files/a/x.html"},"ui/resourceUri":"ui://files/a/x.html"},"name":"t"}`,
		},
		{
			name: "escaped key",
			in:   `{"_meta":{"ui":{"resource\u0055ri":"ui://a/x.html"}}}`,
			want: `{"_meta":{"ui":{"resource\u0055ri":"ui://files/a/x.html"}}}`,
		},
		{
			name: "a URI of another scheme reads back through mcptrunk://",
			in:   `{"_meta":{"ui":{"resourceUri":"https://e/x"}}}`,
			want: `{"_meta":{"ui":{"resourceUri":"mcptrunk://files/https://e/x"}}}`,
		},
		{name: "visibility app only, no URI", in: `{"name":"poll","_meta":{"ui":{"visibility":["app"]}}}`},
		{name: "no _meta", in: `{"name":"t","description":"resourceUri"}`},
		{name: "_meta null", in: `{"name":"t","_meta":null,"x":"resourceUri"}`},
		{name: "ui not an object", in: `{"_meta":{"ui":"resourceUri"}}`},
		{name: "resourceUri elsewhere", in: `{"inputSchema":{"resourceUri":"ui://x/y"}}`},
		{name: "empty resourceUri", in: `{"_meta":{"ui":{"resourceUri":""}}}`},
		{name: "not an object", in: `["resourceUri"]`},
	})
}

func TestNamespaceToolResultApps(t *testing.T) {
	urisRun(t, NamespaceToolResult, []urisCase{
		{
			name: "result _meta",
			in:   `{"content":[{"type":"text","text":"12:00"}],"_meta":{"ui":{"resourceUri":"ui://get-time/mcp-app.html"}}}`,
			want: `{"content":[{"type":"text","text":"12:00"}],"_meta":{"ui":{"resourceUri":"ui://files/get-time/mcp-app.html"}}}`,
		},
		{
			name: "resource link",
			in:   `{"content":[{"type":"resource_link","uri":"ui://app/mcp-app.html","name":"app","mimeType":"text/html;profile=mcp-app"}]}`,
			want: `{"content":[{"type":"resource_link","uri":"ui://files/app/mcp-app.html","name":"app","mimeType":"text/html;profile=mcp-app"}]}`,
		},
		{
			name: "embedded resource, its _meta.ui untouched",
			in:   `{"content":[{"type":"resource","resource":{"uri":"ui://app/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":"<html></html>","_meta":{"ui":{"csp":{"resourceDomains":["https://cdn"]},"prefersBorder":false}}}}]}`,
			want: `{"content":[{"type":"resource","resource":{"uri":"ui://files/app/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":"<html></html>","_meta":{"ui":{"csp":{"resourceDomains":["https://cdn"]},"prefersBorder":false}}}}]}`,
		},
		{
			name: "_meta and content together",
			in:   `{"_meta":{"ui/resourceUri":"ui://a/b"},"content":[{"type":"resource_link","uri":"ui://a/b"}]}`,
			want: `{"_meta":{"ui/resourceUri":"ui://files/a/b"},"content":[{"type":"resource_link","uri":"ui://files/a/b"}]}`,
		},
	})
}

func TestNamespaceReadResultApps(t *testing.T) {
	urisRun(t, NamespaceReadResult, []urisCase{
		{
			name: "contents uri, mime profile and _meta.ui untouched",
			in:   `{"contents":[{"uri":"ui://get-time/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":"<p>x</p>","_meta":{"ui":{"csp":{},"domain":"a.example","prefersBorder":true}}}]}`,
			want: `{"contents":[{"uri":"ui://files/get-time/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":"<p>x</p>","_meta":{"ui":{"csp":{},"domain":"a.example","prefersBorder":true}}}]}`,
		},
	})
}

// TestBuildApps: two servers with the same ui:// URI each list their own,
// in resources/list and templates, the tools name them as listed, and each
// listed URI routes back to its server and the server's own URI.
func TestBuildApps(t *testing.T) {
	app := func(tool string) upstream.Catalog {
		return upstream.Catalog{
			Tools:     []upstream.Item{{Key: tool, Raw: []byte(`{"name":"` + tool + `","_meta":{"ui":{"resourceUri":"ui://mcp-app.html","visibility":["model","app"]}}}`)}},
			Resources: []upstream.Item{{Key: "ui://mcp-app.html", Raw: []byte(`{"uri":"ui://mcp-app.html","name":"app","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}`)}},
			Templates: []upstream.Item{{Key: "ui://view/{id}", Raw: []byte(`{"uriTemplate":"ui://view/{id}","name":"view"}`)}},
		}
	}
	cat := Build(Input{
		Servers: []Server{
			{Name: "basic", Spec: config.Spec{Name: "basic"}, Items: app("get-time"), Listed: true, Settled: true},
			{Name: "monitor", Spec: config.Spec{Name: "monitor"}, Items: app("get-stats"), Listed: true, Settled: true},
		},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	})
	wantItems := map[List][]string{
		ListTools: {
			`{"name":"` + naming.Default.Name("basic", "get-time") + `","_meta":{"ui":{"resourceUri":"ui://basic/mcp-app.html","visibility":["model","app"]}}}`,
			`{"name":"` + naming.Default.Name("monitor", "get-stats") + `","_meta":{"ui":{"resourceUri":"ui://monitor/mcp-app.html","visibility":["model","app"]}}}`,
		},
		ListResources: {
			`{"uri":"ui://basic/mcp-app.html","name":"app","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}`,
			`{"uri":"ui://monitor/mcp-app.html","name":"app","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}`,
		},
		ListTemplates: {
			`{"uriTemplate":"ui://basic/view/{id}","name":"view"}`,
			`{"uriTemplate":"ui://monitor/view/{id}","name":"view"}`,
		},
	}
	for l, want := range wantItems {
		got := cat.Lists[l]
		if len(got) != len(want) {
			t.Fatalf("list %d: %d items, want %d", l, len(got), len(want))
		}
		for i := range want {
			if string(got[i].Item) != want[i] {
				t.Errorf("list %d item %d:\n got %s\nwant %s", l, i, got[i].Item, want[i])
			}
		}
	}
	for uri, want := range map[string][2]string{
		"ui://basic/mcp-app.html":   {"basic", "ui://mcp-app.html"},
		"ui://monitor/mcp-app.html": {"monitor", "ui://mcp-app.html"},
		"ui://monitor/view/42":      {"monitor", "ui://view/42"}, // a host-expanded template
	} {
		server, raw, err := cat.URIOwner(uri)
		if err != nil || server != want[0] || raw != want[1] {
			t.Errorf("URIOwner(%q) = %q, %q, %v; want %q, %q", uri, server, raw, err, want[0], want[1])
		}
	}
	if _, _, err := cat.URIOwner("ui://mcp-app.html"); err == nil {
		t.Errorf("URIOwner of a server's own ui:// URI: no error")
	}
}

// AppTool: an exported name is itself, a name one namespaced server has is
// that server's exported name, a name several have is an error naming
// them, an unprefixed server's name is its own, an unknown name passes on.
func TestAppTool(t *testing.T) {
	tools := func(names ...string) upstream.Catalog { return upstream.Catalog{Tools: catItems("name", names...)} }
	cat := Build(Input{
		Servers: []Server{
			{Name: "basic", Spec: config.Spec{Name: "basic"}, Items: tools("get-time", "refresh"), Listed: true, Settled: true},
			{Name: "loose", Spec: config.Spec{Name: "loose", Namespace: new(bool)}, Items: tools("echo", "stats"), Listed: true, Settled: true},
			{Name: "monitor", Spec: config.Spec{Name: "monitor"}, Items: tools("stats", "refresh", "poll"), Listed: true, Settled: true},
		},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	})
	for name, want := range map[string]string{
		"get-time":                             naming.Default.Name("basic", "get-time"),
		"poll":                                 naming.Default.Name("monitor", "poll"),
		naming.Default.Name("monitor", "poll"): naming.Default.Name("monitor", "poll"),
		"stats":                                "stats", // loose exports it as it is
		"echo":                                 "echo",
		"nosuch":                               "nosuch",
	} {
		if got, err := cat.AppTool(name); err != nil || got != want {
			t.Errorf("AppTool(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	_, err := cat.AppTool("refresh")
	if err == nil || !strings.Contains(err.Error(), `"mcp__basic__refresh" (server "basic"), "mcp__monitor__refresh" (server "monitor")`) {
		t.Errorf("AppTool(refresh) = %v, want an error naming both", err)
	}
}

// TestBuildAppsUnprefixed: a server with "namespace": false exports its app
// under the server's own ui:// URI, in the tool's _meta and the resource
// list alike, and that URI routes back to it beside a namespaced one's.
func TestBuildAppsUnprefixed(t *testing.T) {
	app := upstream.Catalog{
		Tools:     []upstream.Item{{Key: "get-time", Raw: []byte(`{"name":"get-time","_meta":{"ui":{"resourceUri":"ui://mcp-app.html"}}}`)}},
		Resources: []upstream.Item{{Key: "ui://mcp-app.html", Raw: []byte(`{"uri":"ui://mcp-app.html","name":"app","mimeType":"text/html;profile=mcp-app"}`)}},
	}
	cat := Build(Input{
		Servers: []Server{
			{Name: "plain", Spec: config.Spec{Name: "plain", Namespace: new(bool)}, Items: app, Listed: true, Settled: true},
			{Name: "boxed", Spec: config.Spec{Name: "boxed"}, Items: upstream.Catalog{Resources: app.Resources}, Listed: true, Settled: true},
		},
		Policy: PolicyOf(config.TrunkOptions{Prefix: naming.Default.Prefix, MaxNameLength: 64}),
		Logger: slog.New(slog.DiscardHandler),
	})
	if got := cat.Lists[ListTools]; len(got) != 1 || string(got[0].Item) != string(app.Tools[0].Raw) {
		t.Errorf("tools %v: want the unprefixed server's tool as it listed it", got)
	}
	for uri, want := range map[string]string{"ui://mcp-app.html": "plain", "ui://boxed/mcp-app.html": "boxed"} {
		if server, raw, err := cat.URIOwner(uri); err != nil || server != want || raw != "ui://mcp-app.html" {
			t.Errorf("URIOwner(%q) = %q, %q, %v; want %s's ui://mcp-app.html", uri, server, raw, err, want)
		}
	}
}
