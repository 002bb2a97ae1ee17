package upstream

import (
	"go/build"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// The leaves stay leaves: they take their own option structs, so that
// config's shape can change without touching a transport or the OAuth
// client, and a test can hand them a server without writing a config.
func TestLeavesTakeNoConfig(t *testing.T) {
	for _, dir := range []string{"transport/stdio", "transport/remote", "oauth"} {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasSuffix(imp, "/internal/config") {
				t.Errorf("upstream/%s imports %s: take an option struct of its own (leaves.go builds it)", dir, imp)
			}
		}
	}
}

// OAuthServer carries what the OAuth client needs, and a server that is not
// remote gets no URL (which oauth.Authorize refuses as "not a remote server").
func TestOAuthServerFromSpec(t *testing.T) {
	spec := config.Spec{Name: "r", Type: config.TransportSSE, URL: "https://mcp.example.com/sse",
		Headers: map[string]string{"X-Team": "a"},
		OAuth:   config.OAuthOptions{ClientID: "id", ClientSecret: "s", Scopes: []string{"read"}, CallbackPort: 4711}}
	s := OAuthServer(spec)
	if s.Name != "r" || s.URL != spec.URL || !s.SSE || s.Headers["X-Team"] != "a" ||
		s.ClientID != "id" || s.ClientSecret != "s" || len(s.Scopes) != 1 || s.CallbackPort != 4711 {
		t.Errorf("OAuthServer(%+v) = %+v", spec, s)
	}
	spec.Type = config.TransportHTTP
	if s := OAuthServer(spec); s.SSE || s.URL != spec.URL {
		t.Errorf("http: %+v", s)
	}
	if s := OAuthServer(config.Spec{Name: "p", Type: config.TransportStdio, Command: "x", URL: "https://ignored"}); s.URL != "" {
		t.Errorf("stdio server got URL %q", s.URL)
	}
}
