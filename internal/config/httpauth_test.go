package config

import (
	"strings"
	"testing"
)

// trunk.http.auth: ${VAR} expanded in issuer and resource, each field
// checked and named.
func TestConfigHTTPAuth(t *testing.T) {
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"ISSUER_URL": "https://login.example.com", "TRUNK_URL": "https://trunk.example.com"}[k]
		return v, ok
	}
	c, err := parseString(t, `{"mcpServers":{},"trunk":{"http":{"auth":{"issuer":"${ISSUER_URL}","resource":"${TRUNK_URL}/mcp","scopes":["mcp"],"subjectClaim":"email","tokenTypes":["JWT"]}}}}`, env)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Trunk.HTTP.Auth; a == nil || a.Issuer != "https://login.example.com" || a.Resource != "https://trunk.example.com/mcp" ||
		strings.Join(a.Scopes, ",") != "mcp" || a.SubjectClaim != "email" || strings.Join(a.TokenTypes, ",") != "JWT" {
		t.Fatalf("trunk.http.auth = %+v", a)
	}
	for _, tc := range []struct{ auth, want string }{
		{`{"resource":"https://t.example/mcp"}`, `trunk.http.auth.issuer: must be an http(s) URL`},
		{`{"issuer":"https://i.example","resource":"trunk"}`, `trunk.http.auth.resource: must be an http(s) URL`},
		{`{"issuer":"${NOPE}","resource":"https://t.example/mcp"}`, `trunk.http.auth.issuer`},
		{`{"issuer":"https://i.example","resource":"https://t.example/mcp","scopes":"mcp"}`, `trunk.http.auth.scopes: want array`},
		{`{"issuer":"https://i.example","resource":"https://t.example/mcp","tokenTypes":["JWT",""]}`, `trunk.http.auth.tokenTypes[1]: must name a JWT typ header`},
		{`"yes"`, `trunk.http.auth: want object`},
	} {
		_, err := parseString(t, `{"mcpServers":{},"trunk":{"http":{"auth":`+tc.auth+`}}}`, env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("trunk.http.auth %s: error %v, want one containing %q", tc.auth, err, tc.want)
		}
	}
}
