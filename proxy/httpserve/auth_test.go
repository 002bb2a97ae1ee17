package httpserve

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/proxy"
)

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// authHandler is a test handler admitting the access tokens of iss for
// resource, with "mcp" required, beside the static token "laptop".
func authHandler(t *testing.T, iss *testissuer.Issuer, resource string) *testHandler {
	v := accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: resource, Scopes: []string{"mcp"}})
	return newTestHandler(t, Options{Auth: v, Token: "laptop-token-laptop-token-laptop"}, nil)
}

// send posts body with a bearer token and session, returning the answer.
func send(t *testing.T, th *testHandler, token, session, body string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, th.url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := th.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// Every kind of bad token gets its status and a challenge that points at
// the protected resource metadata; good ones and the static token pass.
func TestAccessTokens(t *testing.T) {
	iss := testissuer.New(t)
	th := authHandler(t, iss, "http://trunk.test/mcp")
	aud := "http://trunk.test/mcp"
	scoped := map[string]any{"scope": "mcp"}
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
		status      int
		errorParam  string
	}{
		{"valid", iss.Token(t, "ann", aud, scoped), http.StatusOK, ""},
		{"static token", "laptop-token-laptop-token-laptop", http.StatusOK, ""},
		{"none", "", http.StatusUnauthorized, ""},
		{"another audience", iss.Token(t, "ann", "http://other.test/mcp", scoped), http.StatusUnauthorized, "invalid_token"},
		{"expired", testissuer.Sign(t, iss.CurrentSigner(), iss.Claims("ann", aud, -time.Hour), scoped), http.StatusUnauthorized, "invalid_token"},
		{"forged", testissuer.Sign(t, testissuer.Signer(t, jose.RS256, forger, "k1"), iss.Claims("ann", aud, time.Hour), scoped), http.StatusUnauthorized, "invalid_token"},
		{"no scope", iss.Token(t, "ann", aud, nil), http.StatusForbidden, "insufficient_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, th, tc.token, "", initializeBody)
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status == http.StatusOK {
				return
			}
			c := resp.Header.Get("WWW-Authenticate")
			if !strings.HasPrefix(c, `Bearer resource_metadata="http://trunk.test/.well-known/oauth-protected-resource/mcp"`) ||
				(tc.errorParam != "" && !strings.Contains(c, `error="`+tc.errorParam+`"`)) {
				t.Fatalf("WWW-Authenticate: %s", c)
			}
		})
	}
}

// The metadata is served without a token at both well-known paths.
func TestProtectedResourceMetadata(t *testing.T) {
	iss := testissuer.New(t)
	th := authHandler(t, iss, "http://trunk.test/mcp")
	base := strings.TrimSuffix(th.url, DefaultPath)
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := th.client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource string   `json:"resource"`
			Servers  []string `json:"authorization_servers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || doc.Resource != "http://trunk.test/mcp" || len(doc.Servers) != 1 || doc.Servers[0] != iss.URL {
			t.Fatalf("GET %s: HTTP %d %+v %v", p, resp.StatusCode, doc, err)
		}
	}
}

// A session belongs to the subject that opened it: another user who
// learned its id gets the same 404 as for an unknown one.
func TestSessionBoundToSubject(t *testing.T) {
	iss := testissuer.New(t)
	aud := "http://trunk.test/mcp"
	th := authHandler(t, iss, aud)
	ann, bob := iss.Token(t, "ann", aud, map[string]any{"scope": "mcp"}), iss.Token(t, "bob", aud, map[string]any{"scope": "mcp"})
	resp := send(t, th, ann, "", initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if resp := send(t, th, ann, sid, list); resp.StatusCode != http.StatusOK {
		t.Fatalf("ann in her session: HTTP %d", resp.StatusCode)
	}
	if resp := send(t, th, bob, sid, list); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bob in ann's session: HTTP %d, want 404", resp.StatusCode)
	}
}

// A profile's endpoint: an unknown profile is 404; a session opened there
// is the profile's (the trunk's endpoint and another profile's get 404
// for its id); the profile's session options reach the trunk.
func TestProfileEndpoints(t *testing.T) {
	var mu sync.Mutex
	var attached []proxy.SessionOptions
	h := newHandler(nil, func(out jsonrpc.MessageWriter, o *proxy.SessionOptions) runner {
		mu.Lock()
		attached = append(attached, *o)
		mu.Unlock()
		return newFakeServer(out, nil)
	}, Options{Profiles: func(name string) bool { return name == "weather" || name == "notes" }})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	th := &testHandler{Handler: h, t: t, client: srv.Client()}
	at := func(path string) *testHandler { c := *th; c.url = srv.URL + path; return &c }

	if resp := send(t, at("/mcp/p/nosuch"), "", "", initializeBody); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown profile: HTTP %d, want 404", resp.StatusCode)
	}
	resp := send(t, at("/mcp/p/weather"), "", "", initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize at the profile: HTTP %d, session %q", resp.StatusCode, sid)
	}
	mu.Lock()
	got := attached[len(attached)-1].Profile
	mu.Unlock()
	if got != "weather" {
		t.Fatalf("the session was attached with profile %q", got)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if resp := send(t, at("/mcp/p/weather"), "", sid, list); resp.StatusCode != http.StatusOK {
		t.Fatalf("the session at its profile: HTTP %d", resp.StatusCode)
	}
	for _, path := range []string{"/mcp", "/mcp/p/notes"} {
		if resp := send(t, at(path), "", sid, list); resp.StatusCode != http.StatusNotFound {
			t.Errorf("the weather profile's session at %s: HTTP %d, want 404", path, resp.StatusCode)
		}
	}
}

// claimsServer is a fakeServer that keeps the claims the handler hands it
// (SetClaims).
type claimsServer struct {
	*fakeServer
	mu     sync.Mutex
	claims []map[string]any
}

func (c *claimsServer) SetClaims(claims map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claims = append(c.claims, claims)
}

// What the guard admits a request as reaches its route: a session opened
// at a profile's endpoint with an access token is that caller's on that
// profile (a signed-in caller who is no operator reaches the endpoint even
// with an operators' route at "/"), is handed the newest token and its
// claims, and is found by nobody else and at no other endpoint; the
// operators' route beside it answers only an operator.
func TestAdmissionReachesItsRoute(t *testing.T) {
	iss := testissuer.New(t)
	const aud = "http://trunk.test/mcp"
	var mu sync.Mutex
	var opened *proxy.SessionOptions
	var server *claimsServer
	h := newHandler(nil, func(out jsonrpc.MessageWriter, o *proxy.SessionOptions) runner {
		mu.Lock()
		defer mu.Unlock()
		opened, server = o, &claimsServer{fakeServer: newFakeServer(out, nil)}
		return server
	}, Options{
		Auth:     accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: aud, Scopes: []string{"mcp"}}),
		Profiles: func(name string) bool { return name == "weather" },
		Operator: func(subject string, _ map[string]any) bool { return subject == "ada" },
	})
	h.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("every server\n")) }))
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	th := &testHandler{Handler: h, t: t, client: srv.Client()}
	at := func(path string) *testHandler { c := *th; c.url = srv.URL + path; return &c }

	sam := iss.Token(t, "sam", aud, map[string]any{"scope": "mcp", "team": "support"})
	resp := send(t, at("/mcp/p/weather"), sam, "", initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("sam's initialize at the profile: HTTP %d, session %q", resp.StatusCode, sid)
	}
	mu.Lock()
	o, srvSide := opened, server
	mu.Unlock()
	if o.Subject != "sam" || o.Profile != "weather" || o.Claims["team"] != "support" || o.AccessToken() != sam {
		t.Fatalf("the session was attached as subject %q, profile %q, claims %v, with its token: %v", o.Subject, o.Profile, o.Claims, o.AccessToken() == sam)
	}

	renewed := iss.Token(t, "sam", aud, map[string]any{"scope": "mcp", "team": "oncall"})
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if resp := send(t, at("/mcp/p/weather"), renewed, sid, list); resp.StatusCode != http.StatusOK {
		t.Fatalf("sam's renewed token in his session: HTTP %d", resp.StatusCode)
	}
	srvSide.mu.Lock()
	got := srvSide.claims
	srvSide.mu.Unlock()
	if o.AccessToken() != renewed || len(got) != 1 || got[0]["team"] != "oncall" {
		t.Fatalf("after a renewed token: the session's token is the new one: %v; claims handed over %v", o.AccessToken() == renewed, got)
	}

	ada := iss.Token(t, "ada", aud, map[string]any{"scope": "mcp"})
	for _, tc := range []struct{ who, token, path string }{{"sam", renewed, "/mcp"}, {"ada", ada, "/mcp/p/weather"}} {
		if resp := send(t, at(tc.path), tc.token, sid, list); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s with sam's weather session at %s: HTTP %d, want 404", tc.who, tc.path, resp.StatusCode)
		}
	}
	for _, tc := range []struct {
		who, token string
		want       int
	}{{"sam", renewed, http.StatusForbidden}, {"ada", ada, http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		resp, err := th.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("the operators' page for %s: HTTP %d, want %d", tc.who, resp.StatusCode, tc.want)
		}
	}
}

// An operators' route is served as a ServeMux serves a handler: with its
// pattern's path values; and the MCP endpoint's patterns still win over
// a route at "/".
func TestOperatorsRoutePathValues(t *testing.T) {
	const laptop = "laptop-token-laptop-token-laptop"
	th := newTestHandler(t, Options{Token: laptop}, nil)
	th.Handle("GET /servers/{name}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Pattern + " " + r.PathValue("name")))
	}))
	th.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(th.url, DefaultPath)+"/servers/fs", nil)
	req.Header.Set("Authorization", "Bearer "+laptop)
	resp, err := th.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "GET /servers/{name} fs" {
		t.Fatalf("GET /servers/fs: HTTP %d %q, want the pattern and the name", resp.StatusCode, body)
	}
	if resp := send(t, th, laptop, "", initializeBody); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize beside a route at /: HTTP %d", resp.StatusCode)
	}
}

// A token's header fields are the sender's: a refused token whose kid or
// typ is 200 KB is logged with them clipped, not whole (each request
// could otherwise write a megabyte of log), and the reason still names
// what was wrong.
func TestRefusedTokenHeadersClippedInLog(t *testing.T) {
	iss := testissuer.New(t)
	var log testkit.Buffer
	v := accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: "http://trunk.test/mcp", Scopes: []string{"mcp"}})
	th := newTestHandler(t, Options{Auth: v, Logger: slog.New(slog.NewTextHandler(&log, nil))}, nil)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("k", 200<<10)
	signer := func(kid, typ string) jose.Signer {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", kid))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims := iss.Claims("ann", "http://trunk.test/mcp", time.Hour)
	for _, tc := range []struct{ name, token, reason string }{
		{"kid", testissuer.Sign(t, signer(huge, "at+jwt"), claims, nil), "no key"},
		{"typ", testissuer.Sign(t, signer("k1", huge), claims, nil), "typ"},
	} {
		before := len(log.String())
		if resp := send(t, th, tc.token, "", initializeBody); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a token with a 200 KB %s: HTTP %d, want 401", tc.name, resp.StatusCode)
		}
		logged := log.String()[before:]
		if len(logged) > 2<<10 || !strings.Contains(logged, "access token refused") || !strings.Contains(logged, tc.reason) {
			t.Errorf("a token with a 200 KB %s: %d bytes of log, want one short line naming %q:\n%.600s", tc.name, len(logged), tc.reason, logged)
		}
	}
}

// The operators' routes (Handle) answer only operators when access tokens
// are in use: the static token, and callers Options.Operator admits; any
// other signed-in caller gets 403, no token 401. Without access tokens
// the listener has one operator, whoever has its token.
func TestOperatorsRoutes(t *testing.T) {
	iss := testissuer.New(t)
	const aud = "http://trunk.test/mcp"
	admins := func(_ string, claims map[string]any) bool {
		groups, _ := claims["groups"].([]any)
		return len(groups) == 1 && groups[0] == "admin"
	}
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("every server\n")) })
	get := func(th *testHandler, token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(th.url, DefaultPath)+"/status", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := th.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	const laptop = "laptop-token-laptop-token-laptop"
	for _, tc := range []struct {
		name     string
		operator func(string, map[string]any) bool
		token    string
		want     int
	}{
		{"an admin", admins, iss.Token(t, "ada", aud, map[string]any{"scope": "mcp", "groups": []string{"admin"}}), http.StatusOK},
		{"support", admins, iss.Token(t, "sam", aud, map[string]any{"scope": "mcp", "groups": []string{"support"}}), http.StatusForbidden},
		{"an admin, no operators configured", nil, iss.Token(t, "ada", aud, map[string]any{"scope": "mcp", "groups": []string{"admin"}}), http.StatusForbidden},
		{"the static token", nil, laptop, http.StatusOK},
		{"no token", admins, "", http.StatusUnauthorized},
	} {
		th := newTestHandler(t, Options{Auth: accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: aud, Scopes: []string{"mcp"}}), Token: laptop, Operator: tc.operator}, nil)
		th.Handle("GET /status", page)
		if got := get(th, tc.token); got != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.want)
		}
	}
	th := newTestHandler(t, Options{Token: laptop}, nil)
	th.Handle("GET /status", page)
	if got := get(th, laptop); got != http.StatusOK {
		t.Errorf("the token of a listener without access tokens: HTTP %d, want 200", got)
	}
}
