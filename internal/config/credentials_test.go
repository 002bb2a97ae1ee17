package config

import (
	"reflect"
	"testing"
)

func TestConfigCredentials(t *testing.T) {
	env := mapLookup(map[string]string{"TRUNK_SECRET": "SUPERSECRET", "ALICE_TOKEN": "SUPERSECRET-A"})
	c, err := parseString(t, `{"trunk": {"http": {"auth": {"issuer": "https://id.example.com", "resource": "https://trunk.example.com/mcp"}}},
	"mcpServers": {
		"gh": {"url": "https://gh.example.com/mcp", "credentials": {"mode": "exchange", "audience": "https://gh.example.com", "clientId": "trunk", "clientSecret": "${TRUNK_SECRET}", "scopes": ["repo"]}},
		"db": {"command": "db-server", "credentials": {"mode": "static", "users": {"alice": {"env": {"DB_TOKEN": "${ALICE_TOKEN}"}}}}},
		"files": {"command": "f", "credentials": {"mode": "static", "file": "/etc/mcptrunk/users.json"}},
		"plain": {"command": "p", "credentials": {"mode": "shared"}}}}`, env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	byName := map[string]Spec{}
	for _, s := range c.Servers {
		byName[s.Name] = s
	}
	wantGH := Credentials{Mode: CredentialsExchange, Issuer: "https://id.example.com", Audience: "https://gh.example.com", ClientID: "trunk", ClientSecret: "SUPERSECRET", Scopes: []string{"repo"}}
	if got := byName["gh"].Credentials; !reflect.DeepEqual(got, wantGH) {
		t.Errorf("gh: credentials = %+v, want %+v", got, wantGH)
	}
	if gh := byName["gh"]; !gh.PerUser() || gh.UsesOAuth() {
		t.Errorf("gh: PerUser %v, UsesOAuth %v; want per-user without OAuth", gh.PerUser(), gh.UsesOAuth())
	}
	wantDB := map[string]UserSecrets{"alice": {Env: map[string]string{"DB_TOKEN": "SUPERSECRET-A"}}}
	if got := byName["db"].Credentials.Users; !reflect.DeepEqual(got, wantDB) {
		t.Errorf("db: users = %+v, want %+v", got, wantDB)
	}
	if got := byName["files"].CredentialsSummary(); got != "per-user (static, from /etc/mcptrunk/users.json)" {
		t.Errorf("files: summary %q", got)
	}
	if p := byName["plain"]; p.PerUser() || p.CredentialsSummary() != "shared" {
		t.Errorf("plain: PerUser %v, summary %q; want shared", p.PerUser(), p.CredentialsSummary())
	}
	if got := byName["gh"].CredentialsSummary(); got != "per-user (exchange at https://id.example.com for audience https://gh.example.com)" {
		t.Errorf("gh: summary %q", got)
	}

	const exch = `"mode": "exchange", "audience": "a", "clientId": "c", "clientSecret": "${TRUNK_SECRET}"`
	bad := []parseErrorCase{
		{"passthrough", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "passthrough"}}}}`,
			`server "x": credentials.mode: "passthrough" is refused: the caller's token was issued for the trunk`},
		{"unknown mode", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "magic"}}}}`,
			`server "x": credentials.mode: must be "shared", "exchange", "static" or "oauth", got "magic"`},
		{"not an object", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": "exchange"}}}`,
			`server "x": credentials: want object, got string`},
		{"exchange for stdio", `{"mcpServers": {"x": {"command": "c", "credentials": {` + exch + `, "issuer": "https://id.example.com"}}}}`,
			`server "x": credentials.mode: "exchange" is only for remote servers`},
		{"exchange without issuer", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {` + exch + `}}}}`,
			`server "x": credentials.issuer: required for exchange when trunk.http.auth sets no issuer`},
		{"exchange without client", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "exchange", "issuer": "https://id.example.com", "audience": "a"}}}}`,
			`server "x": credentials.clientId: clientId and clientSecret are required`},
		{"exchange without audience", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "exchange", "issuer": "https://id.example.com", "clientId": "c", "clientSecret": "${TRUNK_SECRET}"}}}}`,
			`server "x": credentials.audience: required`},
		{"exchange with Authorization", `{"mcpServers": {"x": {"url": "https://e.com", "headers": {"Authorization": "Bearer ${TRUNK_SECRET}"}, "credentials": {` + exch + `, "issuer": "https://id.example.com"}}}}`,
			`server "x": credentials: an Authorization header is configured too`},
		{"exchange with oauth", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {}, "credentials": {` + exch + `, "issuer": "https://id.example.com"}}}}`,
			`server "x": credentials: "oauth" is set too`},
		{"exchange with a file", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {` + exch + `, "issuer": "https://id.example.com", "file": "u.json"}}}}`,
			`server "x": credentials.file: only for mode "static"`},
		{"static with an audience", `{"mcpServers": {"x": {"command": "c", "credentials": {"mode": "static", "file": "u.json", "audience": "a"}}}}`,
			`server "x": credentials.audience: only for mode "exchange"`},
		{"static without secrets", `{"mcpServers": {"x": {"command": "c", "credentials": {"mode": "static"}}}}`,
			`server "x": credentials: mode "static" needs "file"`},
		{"static literal secret", `{"mcpServers": {"x": {"command": "c", "credentials": {"mode": "static", "users": {"alice": {"env": {"T": "SUPERSECRET"}}}}}}}`,
			`server "x": credentials.users.alice.env.T: must be a ${VAR} reference`},
		{"static headers for stdio", `{"mcpServers": {"x": {"command": "c", "credentials": {"mode": "static", "users": {"alice": {"headers": {"T": "${ALICE_TOKEN}"}}}}}}}`,
			`server "x": credentials.users.alice.headers: not for this server`},
		{"static unknown user key", `{"mcpServers": {"x": {"command": "c", "credentials": {"mode": "static", "users": {"alice": {"envs": {}}}}}}}`,
			`server "x": credentials.users.alice.envs: unknown key`},
		{"static unset variable", `{"mcpServers": {"x": {"command": "c", "credentials": {"mode": "static", "users": {"alice": {"env": {"T": "${NOPE}"}}}}}}}`,
			`server "x": credentials.users.alice.env.T: variable "NOPE" is not set`},
	}
	checkParseErrors(t, bad, env, "SUPERSECRET")
}

func TestConfigCredentialsOAuth(t *testing.T) {
	const auth = `"trunk": {"http": {"auth": {"issuer": "https://id.example.com", "resource": "https://trunk.example.com/mcp"}}}, `
	env := mapLookup(map[string]string{"GH_SECRET": "SUPERSECRET"})
	cfg, err := parseString(t, `{`+auth+`"mcpServers": {
		"gh": {"url": "https://gh.example.com/mcp", "oauth": {"callbackPort": 8765}, "credentials": {"mode": "oauth", "clientId": "trunk", "clientSecret": "${GH_SECRET}", "scopes": ["repo"]}},
		"dyn": {"url": "https://dyn.example.com/mcp", "credentials": {"mode": "oauth"}}}}`, env)
	if err != nil {
		t.Fatal(err)
	}
	gh, dyn := cfg.Servers[0], cfg.Servers[1]
	if gh.Name != "gh" {
		gh, dyn = dyn, gh
	}
	want := Credentials{Mode: CredentialsOAuth, ClientID: "trunk", ClientSecret: "SUPERSECRET", Scopes: []string{"repo"}}
	if !reflect.DeepEqual(gh.Credentials, want) {
		t.Errorf("gh: credentials = %+v, want %+v", gh.Credentials, want)
	}
	// Per-user, and OAuth too: the instance that lists signs in as the
	// trunk ("mcptrunk auth"), each caller's as the caller.
	if !gh.PerUser() || !gh.UsesOAuth() || gh.OAuth.CallbackPort != 8765 {
		t.Errorf("gh: PerUser %v, UsesOAuth %v, oauth %+v", gh.PerUser(), gh.UsesOAuth(), gh.OAuth)
	}
	if got := gh.CredentialsSummary(); got != "per-user (oauth sign-in, client trunk)" {
		t.Errorf("gh: summary %q", got)
	}
	if got := dyn.CredentialsSummary(); got != "per-user (oauth sign-in, dynamic client registration)" {
		t.Errorf("dyn: summary %q", got)
	}

	bad := []parseErrorCase{
		{"oauth for stdio", `{` + auth + `"mcpServers": {"x": {"command": "c", "credentials": {"mode": "oauth"}}}}`,
			`server "x": credentials.mode: "oauth" is only for remote servers`},
		{"oauth without trunk.http.auth", `{"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "oauth"}}}}`,
			`server "x": credentials.mode: "oauth" needs trunk.http.auth with its resource`},
		{"oauth with Authorization", `{` + auth + `"mcpServers": {"x": {"url": "https://e.com", "headers": {"Authorization": "Bearer ${GH_SECRET}"}, "credentials": {"mode": "oauth"}}}}`,
			`server "x": credentials: an Authorization header is configured too`},
		{"oauth with an audience", `{` + auth + `"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "oauth", "audience": "a"}}}}`,
			`server "x": credentials.audience: not for mode "oauth"`},
		{"oauth secret without client", `{` + auth + `"mcpServers": {"x": {"url": "https://e.com", "credentials": {"mode": "oauth", "clientSecret": "${GH_SECRET}"}}}}`,
			`server "x": credentials.clientSecret: needs clientId`},
	}
	checkParseErrors(t, bad, env, "SUPERSECRET")
}
