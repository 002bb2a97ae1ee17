package naming

import (
	"net/url"
	"testing"
)

func TestResourceURI(t *testing.T) {
	tests := []struct {
		server, uri, want string
	}{
		{"srv", "demo://r/{id}", "mcptrunk://srv/demo://r/{id}"},
		{"files", "file:///tmp/x", "mcptrunk://files/file:///tmp/x"},
		{"w", "https://example.com/a?b=c#d", "mcptrunk://w/https://example.com/a?b=c#d"},
		{"s", "x y/%20\u00e9", "mcptrunk://s/x y/%20\u00e9"}, // verbatim, no escaping
		{"s", "/abs", "mcptrunk://s//abs"},
		{"basic", "ui://get-time/mcp-app.html", "ui://basic/get-time/mcp-app.html"}, // apps keep their scheme
		{"b", "ui://mcp-app.html", "ui://b/mcp-app.html"},
		{"b", "UI://x/{id}", "UI://b/x/{id}"}, // scheme as written, templates too
		{"b", "ui:///x", "ui://b//x"},
		{"b", "ui://", "mcptrunk://b/ui://"},                                        // nothing to namespace inside
		{"notes", "skill://pdf-forms/SKILL.md", "skill://notes/pdf-forms/SKILL.md"}, // skills too: files stay inside their directory
		{"notes", "skill://pdf-forms/scripts/fill.py", "skill://notes/pdf-forms/scripts/fill.py"},
	}
	for _, tt := range tests {
		if got := ResourceURI(tt.server, tt.uri); got != tt.want {
			t.Errorf("ResourceURI(%q, %q) = %q, want %q", tt.server, tt.uri, got, tt.want)
		}
	}
}

func TestSplitResourceURI(t *testing.T) {
	tests := []struct {
		in          string
		server, uri string
		ok          bool
	}{
		{"mcptrunk://srv/demo://r/42", "srv", "demo://r/42", true}, // host-expanded template
		{"mcptrunk://srv/demo://r/{id}", "srv", "demo://r/{id}", true},
		{"mcptrunk://files/file:///tmp/x", "files", "file:///tmp/x", true},
		{"mcptrunk://s//abs", "s", "/abs", true},
		{"mcptrunk://s/a/b/c", "s", "a/b/c", true},
		{"MCPTRUNK://Srv/x", "Srv", "x", true}, // scheme case-insensitive, server as written
		{"McpTrunk://a-b_c/x", "a-b_c", "x", true},
		{"mcptrunk://s/ ", "s", " ", true},
		{"", "", "", false},
		{"mcptrunk://", "", "", false},
		{"mcptrunk://srv", "", "", false},      // no slash
		{"mcptrunk://srv/", "", "", false},     // empty rest
		{"mcptrunk:///x", "", "", false},       // empty server
		{"mcptrunk://s.v/x", "", "", false},    // illegal server char
		{"mcptrunk://s v/x", "", "", false},    // illegal server char
		{"mcptrunk://s:80/x", "", "", false},   // port is not a server id
		{"mcptrunk://\u00e9/x", "", "", false}, // non-ASCII server
		{"mcptrunk:/srv/x", "", "", false},     // wrong form
		{"mcptrunk:srv/x", "", "", false},      // wrong form
		{"other://srv/x", "", "", false},       // other scheme
		{"mcptrunkx://srv/x", "", "", false},   // longer scheme
		{"xmcptrunk://srv/x", "", "", false},   // prefix not at start
		{"file:///tmp/x", "", "", false},
		{"ui://basic/get-time/mcp-app.html", "basic", "ui://get-time/mcp-app.html", true},
		{"ui://b/mcp-app.html", "b", "ui://mcp-app.html", true},
		{"UI://b/x/42", "b", "UI://x/42", true},
		{"ui://b//x", "b", "ui:///x", true},
		{"skill://notes/pdf-forms/SKILL.md", "notes", "skill://pdf-forms/SKILL.md", true},
		{"mcptrunk://b/ui://", "b", "ui://", true},
		{"ui://mcp-app.html", "", "", false}, // an upstream's own, not the trunk's
		{"ui://b/", "", "", false},
		{"ui://s.v/x", "", "", false},
	}
	for _, tt := range tests {
		server, uri, ok := SplitResourceURI(tt.in)
		if server != tt.server || uri != tt.uri || ok != tt.ok {
			t.Errorf("SplitResourceURI(%q) = (%q, %q, %v), want (%q, %q, %v)",
				tt.in, server, uri, ok, tt.server, tt.uri, tt.ok)
		}
	}
}

func TestResourceURIRoundTrip(t *testing.T) {
	for _, server := range []string{"srv", "Files", "_a", "a-b", "trunk"} {
		for _, uri := range []string{"demo://r/{id}", "file:///tmp/x", "/", "x", "mcptrunk://inner/y", "a?b#c", "\u65e5\u672c", "%zz", " ", "ui://a/b.html", "ui://x", "ui:///p", "ui://"} {
			s, u, ok := SplitResourceURI(ResourceURI(server, uri))
			if !ok || s != server || u != uri {
				t.Errorf("round trip (%q, %q) = (%q, %q, %v)", server, uri, s, u, ok)
			}
		}
	}
}

// TestResourceURIParses checks that for ordinary URIs the namespaced form is
// also a well-formed absolute URI, so hosts that parse it see our scheme and
// the server as host.
func TestResourceURIParses(t *testing.T) {
	for _, server := range []string{"srv", "brave_search", "a-b", "Files"} {
		for _, uri := range []string{
			"file:///tmp/x",
			"demo://resource/static/document/a.md",
			"https://example.com/a?b=c#d",
		} {
			s := ResourceURI(server, uri)
			p, err := url.Parse(s)
			if err != nil {
				t.Errorf("url.Parse(%q): %v", s, err)
				continue
			}
			if !p.IsAbs() || p.Scheme != URIScheme || p.Host != server {
				t.Errorf("url.Parse(%q) = abs %v scheme %q host %q, want abs, %q, %q", s, p.IsAbs(), p.Scheme, p.Host, URIScheme, server)
			}
		}
	}
}
