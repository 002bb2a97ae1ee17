package oauth

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOAuthParseChallenges(t *testing.T) {
	tests := []struct {
		in   []string
		want []challenge
	}{
		{[]string{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b", error="invalid_token"`},
			[]challenge{{"bearer", map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "a b", "error": "invalid_token"}}}},
		{[]string{`Basic realm="r", Bearer resource_metadata=https://y/m,scope=x`},
			[]challenge{{"basic", map[string]string{"realm": "r"}}, {"bearer", map[string]string{"resource_metadata": "https://y/m", "scope": "x"}}}},
		{[]string{`Basic realm="a, b"`, `bearer  Scope = "q\"uoted"`},
			[]challenge{{"basic", map[string]string{"realm": "a, b"}}, {"bearer", map[string]string{"scope": `q"uoted`}}}},
		{[]string{`Bearer`}, []challenge{{"bearer", map[string]string{}}}},
		{[]string{`Negotiate abc==, Bearer realm="x"`},
			// The token68 becomes a harmless parameter.
			[]challenge{{"negotiate", map[string]string{"abc": "="}}, {"bearer", map[string]string{"realm": "x"}}}},
		{nil, nil},
	}
	for _, tt := range tests {
		got := parseChallenges(tt.in)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("parseChallenges(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if b := bearerChallenge(parseChallenges([]string{`Basic realm="r", Bearer scope="s"`})); b == nil || b.param("scope") != "s" {
		t.Errorf("bearerChallenge: %v", b)
	}
}

func TestOAuthCanonicalResource(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://Example.COM:443/mcp?key=secret#frag": "https://example.com/mcp",
		"http://127.0.0.1:8080/":                      "http://127.0.0.1:8080",
		"http://h:80/a/b/":                            "http://h/a/b/",
	} {
		if got := canonicalResource(in); got != want {
			t.Errorf("canonicalResource(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct {
		res, target string
		ok          bool
	}{
		{"https://e.com", "https://e.com/mcp", true},
		{"https://e.com/", "https://e.com/mcp", true},
		{"https://e.com/mcp", "https://e.com/mcp", true},
		{"https://e.com/m", "https://e.com/mcp", false},
		{"https://other.com", "https://e.com/mcp", false},
		{"http://e.com", "https://e.com/mcp", false},
	} {
		if got := resourceCovers(tt.res, tt.target); got != tt.ok {
			t.Errorf("resourceCovers(%q, %q) = %v", tt.res, tt.target, got)
		}
	}
}

func TestOAuthMetadataURLs(t *testing.T) {
	got, _ := metadataURLs("https://as.example.com/tenant1")
	want := []string{
		"https://as.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://as.example.com/.well-known/openid-configuration/tenant1",
		"https://as.example.com/tenant1/.well-known/openid-configuration",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("with a path: %v", got)
	}
	got, _ = metadataURLs("https://as.example.com/")
	want = []string{"https://as.example.com/.well-known/oauth-authorization-server", "https://as.example.com/.well-known/openid-configuration"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("without a path: %v", got)
	}
	for u, ok := range map[string]bool{"https://a.com/x": true, "http://127.0.0.1:9/x": true, "http://localhost/x": true, "http://a.com/x": false, "file:///etc/passwd": false} {
		if err := checkEndpoint("e", u); (err == nil) != ok {
			t.Errorf("checkEndpoint(%q) = %v", u, err)
		}
	}
}

func TestOAuthTokenDir(t *testing.T) {
	t.Setenv(TokenDirEnv, "")
	t.Setenv("XDG_STATE_HOME", "/state")
	if d, _ := TokenDir(); d != filepath.Join("/state", "mcptrunk", "oauth") {
		t.Errorf("with XDG_STATE_HOME: %s", d)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if d, _ := TokenDir(); runtime.GOOS != "windows" && d != filepath.Join("/home/u", ".local", "state", "mcptrunk", "oauth") {
		t.Errorf("with a relative XDG_STATE_HOME: %s", d)
	}
	t.Setenv(TokenDirEnv, "/custom")
	if d, _ := TokenDir(); d != "/custom" {
		t.Errorf("with %s: %s", TokenDirEnv, d)
	}
}

// The legacy SSE transport: the stream and the POSTs carry the token.
