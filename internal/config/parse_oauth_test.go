package config

import (
	"reflect"
	"testing"
)

func TestConfigOAuth(t *testing.T) {
	env := mapLookup(map[string]string{"CLIENT_SECRET": "SUPERSECRET", "CLIENT": "my-client"})
	c, err := parseString(t, `{"mcpServers": {
		"a": {"url": "https://e.com/mcp", "oauth": {"clientId": "${CLIENT}", "clientSecret": "${CLIENT_SECRET}", "scopes": ["read", "write"], "callbackPort": 8765}},
		"b": {"type": "sse", "url": "https://e.com/sse", "oauth": {}},
		"c": {"url": "https://e.com/mcp", "oauth": null}}}`, env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := OAuthOptions{ClientID: "my-client", ClientSecret: "SUPERSECRET", Scopes: []string{"read", "write"}, CallbackPort: 8765}
	if got := c.Servers[0].OAuth; !reflect.DeepEqual(got, want) {
		t.Errorf("a: oauth = %+v, want %+v", got, want)
	}
	if got := c.Servers[1].OAuth; !reflect.DeepEqual(got, OAuthOptions{}) {
		t.Errorf("b: oauth = %+v, want zero", got)
	}
	if !c.Servers[1].UsesOAuth() || !c.Servers[2].UsesOAuth() {
		t.Error("OAuth should apply to remote servers without an Authorization header")
	}

	bad := []parseErrorCase{
		{"stdio", `{"mcpServers": {"x": {"command": "c", "oauth": {}}}}`, `server "x": oauth: only for remote servers (type "http" or "sse")`},
		{"with Authorization header", `{"mcpServers": {"x": {"url": "https://e.com", "headers": {"authorization": "Bearer ${CLIENT_SECRET}"}, "oauth": {"clientId": "c"}}}}`,
			`server "x": oauth: an Authorization header is configured too`},
		{"not an object", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": true}}}`, `server "x": oauth: want object, got boolean`},
		{"secret without client", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientSecret": "${CLIENT_SECRET}"}}}}`,
			`server "x": oauth.clientSecret: needs oauth.clientId`},
		{"secret of the wrong type", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientId": "c", "clientSecret": ["SUPERSECRET"]}}}}`,
			`server "x": oauth.clientSecret: want string, got array`},
		{"secret with newline", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientId": "c", "clientSecret": "SUPERSECRET\n"}}}}`,
			`server "x": oauth.clientSecret: contains a line break`},
		{"unset variable", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientId": "c", "clientSecret": "${NOPE}"}}}}`,
			`server "x": oauth.clientSecret: variable "NOPE" is not set`},
		{"scope with a space", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"scopes": ["a b"]}}}}`,
			`server "x": oauth.scopes[0]: must be one scope`},
		{"scopes not strings", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"scopes": [1]}}}}`,
			`server "x": oauth.scopes[0]: want string, got number`},
		{"port out of range", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"callbackPort": 70000}}}}`,
			`server "x": oauth.callbackPort: must be a port number (1-65535, or 0 for any free port), got 70000`},
		{"port not a number", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"callbackPort": "8080"}}}}`,
			`server "x": oauth.callbackPort: want integer, got string`},
	}
	checkParseErrors(t, bad, env, "SUPERSECRET")
}
