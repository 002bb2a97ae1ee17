package upstream

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// The OAuth tests run a small authorization server and an MCP server that
// demands its tokens, both on 127.0.0.1 (two origins, as in real life):
//
//   - the MCP server (mcp-go's streamable HTTP server) answers 401 with
//     "WWW-Authenticate: Bearer resource_metadata=..., scope=..." to a
//     request without a valid token, and echoes the Authorization header it
//     got in the body, as careless servers do;
//   - its protected resource metadata names the authorization server, whose
//     issuer has a path (/tenant), so the metadata is found by path
//     insertion;
//   - the authorization server registers clients (RFC 7591), "authorises"
//     any request to its authorize endpoint at once (the test plays the
//     browser by GETting the URL the flow printed and following the
//     redirect to the trunk's listener), checks PKCE S256 and the resource
//     parameter at the token endpoint, issues access tokens that expire
//     after ttl and refresh tokens that rotate, and can revoke them.
//
// Every code, token and verifier it sees is recorded: none may appear in a
// log record or an error.

type oauthFixture struct {
	t        *testing.T
	as, rs   *httptest.Server
	mcpURL   string
	issuer   string
	resource string
	mcp      http.Handler
	stop     chan struct{}

	mu              sync.Mutex
	ttl             time.Duration
	noMetadataParam bool // 401 without resource_metadata: found at the well-known URI
	noPKCEMetadata  bool // the metadata lacks code_challenge_methods_supported
	echoStatus      int  // answer every valid request with this status, echoing the Authorization header
	clients         map[string][]string
	codes           map[string]codeGrant
	access          map[string]time.Time // token -> expiry
	refresh         map[string]string    // token -> client id
	secrets         []string
	counts          map[string]int
}

type codeGrant struct {
	client, redirect, challenge, resource string
}

func newOAuthFixture(t *testing.T) *oauthFixture { return newOAuthFixtureOf(t, "http") }

// newOAuthFixtureOf serves a streamable HTTP ("http", at /mcp) or an SSE
// ("sse", at /sse and /message) MCP server.
func newOAuthFixtureOf(t *testing.T, typ string) *oauthFixture {
	t.Helper()
	f := &oauthFixture{
		t: t, ttl: time.Hour, stop: make(chan struct{}),
		clients: map[string][]string{}, codes: map[string]codeGrant{},
		access: map[string]time.Time{}, refresh: map[string]string{}, counts: map[string]int{},
	}
	cancelled := make(chan string, 4)
	s := newTestMCPServer(cancelled, f.stop)
	path := "/mcp"
	if typ == "sse" {
		f.mcp, path = server.NewSSEServer(s), "/sse"
	} else {
		f.mcp = server.NewStreamableHTTPServer(s)
	}
	f.as = serveLoopback(t, http.HandlerFunc(f.serveAS))
	f.rs = serveLoopback(t, http.HandlerFunc(f.serveRS))
	f.issuer = f.as.URL + "/tenant"
	f.mcpURL = f.rs.URL + path
	f.resource = f.mcpURL
	t.Cleanup(func() {
		close(f.stop)
		f.rs.CloseClientConnections()
		f.rs.Close()
		f.as.CloseClientConnections()
		f.as.Close()
	})
	return f
}

func (f *oauthFixture) count(what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[what]
}

func (f *oauthFixture) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// newSecret returns a fresh random value and records it.
func (f *oauthFixture) newSecret(prefix string) string {
	s := prefix + "-" + rand.Text()
	f.secrets = append(f.secrets, s)
	return s
}

// revokeAccess makes every access token issued so far invalid.
func (f *oauthFixture) revokeAccess() {
	f.set(func() { f.access = map[string]time.Time{} })
}

// revokeAll revokes the access and the refresh tokens.
func (f *oauthFixture) revokeAll() {
	f.set(func() {
		f.access = map[string]time.Time{}
		f.refresh = map[string]string{}
	})
}

// checkNoSecrets fails when any recorded secret appears in text.
func (f *oauthFixture) checkNoSecrets(what, text string) {
	f.t.Helper()
	f.mu.Lock()
	secrets := append([]string(nil), f.secrets...)
	f.mu.Unlock()
	if len(secrets) == 0 {
		f.t.Errorf("no secrets were recorded: the check proves nothing")
	}
	for _, s := range secrets {
		if strings.Contains(text, s) {
			f.t.Errorf("%s contains the secret %q:\n%s", what, s, text)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *oauthFixture) serveRS(w http.ResponseWriter, r *http.Request) {
	mcpPath := strings.TrimPrefix(f.mcpURL, f.rs.URL)
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource" + mcpPath:
		writeJSON(w, http.StatusOK, map[string]any{
			"resource":              f.resource,
			"authorization_servers": []string{f.issuer},
			"scopes_supported":      []string{"mcp:tools", "mcp:extra"},
		})
		return
	case mcpPath, "/message":
	default:
		http.NotFound(w, r)
		return
	}
	auth := r.Header.Get("Authorization")
	tok, isBearer := strings.CutPrefix(auth, "Bearer ")
	f.mu.Lock()
	exp, ok := f.access[tok]
	valid := isBearer && ok && time.Now().Before(exp)
	if !valid {
		f.counts["401"]++
	}
	noMeta, echo := f.noMetadataParam, f.echoStatus
	f.mu.Unlock()
	if !valid {
		ch := `Bearer scope="mcp:tools"`
		if !noMeta {
			ch += fmt.Sprintf(`, resource_metadata="%s/.well-known/oauth-protected-resource%s"`, f.rs.URL, mcpPath)
		}
		if auth != "" {
			ch += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		http.Error(w, "invalid credentials: "+auth, http.StatusUnauthorized)
		return
	}
	if echo != 0 && r.Method == http.MethodPost {
		http.Error(w, "cannot do that with "+auth, echo)
		return
	}
	f.mcp.ServeHTTP(w, r)
}

func (f *oauthFixture) serveAS(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server/tenant":
		meta := map[string]any{
			"issuer":                                         f.issuer,
			"authorization_endpoint":                         f.issuer + "/authorize",
			"token_endpoint":                                 f.issuer + "/token",
			"registration_endpoint":                          f.issuer + "/register",
			"response_types_supported":                       []string{"code"},
			"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported":          []string{"none"},
			"authorization_response_iss_parameter_supported": true,
		}
		f.mu.Lock()
		if !f.noPKCEMetadata {
			meta["code_challenge_methods_supported"] = []string{"S256"}
		}
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, meta)
	case "/tenant/register":
		f.register(w, r)
	case "/tenant/authorize":
		f.authorize(w, r)
	case "/tenant/token":
		f.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *oauthFixture) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		GrantTypes   []string `json:"grant_types"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) == 0 || req.AuthMethod != "none" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	for _, u := range req.RedirectURIs {
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/callback") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
	}
	f.mu.Lock()
	id := "client-" + strconv.Itoa(len(f.clients)+1)
	f.clients[id] = req.RedirectURIs
	f.counts["register"]++
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (f *oauthFixture) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts["authorize"]++
	uris := f.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	found := false
	for _, u := range uris {
		found = found || u == redirect
	}
	switch {
	case !found:
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code", q.Get("code_challenge_method") != "S256", len(q.Get("code_challenge")) != 43,
		q.Get("state") == "", q.Get("resource") != f.resource, q.Get("scope") != "mcp:tools":
		http.Error(w, "bad authorization request: "+q.Encode(), http.StatusBadRequest)
		return
	}
	code := f.newSecret("code")
	f.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource")}
	back, _ := url.Parse(redirect)
	bq := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {f.issuer}}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (f *oauthFixture) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	form := r.PostForm
	f.mu.Lock()
	defer f.mu.Unlock()
	refuse := func(code string) {
		f.counts["refused "+form.Get("grant_type")]++
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": "rejected " + form.Get("code") + form.Get("refresh_token")})
	}
	if form.Get("resource") != f.resource {
		refuse("invalid_target")
		return
	}
	client := form.Get("client_id")
	switch form.Get("grant_type") {
	case "authorization_code":
		g, ok := f.codes[form.Get("code")]
		delete(f.codes, form.Get("code")) // one use
		f.secrets = append(f.secrets, form.Get("code_verifier"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != form.Get("redirect_uri") || g.resource != form.Get("resource") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			refuse("invalid_grant")
			return
		}
		f.counts["code"]++
	case "refresh_token":
		owner, ok := f.refresh[form.Get("refresh_token")]
		if !ok || owner != client {
			refuse("invalid_grant")
			return
		}
		delete(f.refresh, form.Get("refresh_token")) // rotation
		f.counts["refresh"]++
	default:
		refuse("unsupported_grant_type")
		return
	}
	access, refresh := f.newSecret("access"), f.newSecret("refresh")
	f.access[access] = time.Now().Add(f.ttl)
	f.refresh[refresh] = client
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "bearer", "refresh_token": refresh,
		"expires_in": int(f.ttl / time.Second), "scope": "mcp:tools",
	})
}
