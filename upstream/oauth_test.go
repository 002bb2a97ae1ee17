package upstream

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
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

// oauthEnv points the token store at a fresh directory, shortens the
// background flow's polling, and replaces the browser with a recorder.
type oauthEnv struct {
	dir    string
	mu     sync.Mutex
	opened []string // URLs the "browser" was asked to open
}

func setupOAuthEnv(t *testing.T) *oauthEnv {
	t.Helper()
	e := &oauthEnv{dir: filepath.Join(t.TempDir(), "state", "tokens")}
	t.Setenv(oauth.TokenDirEnv, e.dir)
	t.Setenv(NoBrowserEnv, "")
	oldOpener, oldPoll := oauth.BrowserOpener, authStorePoll
	oauth.BrowserOpener = func(u string) {
		e.mu.Lock()
		e.opened = append(e.opened, u)
		e.mu.Unlock()
	}
	authStorePoll = 50 * time.Millisecond
	t.Cleanup(func() { oauth.BrowserOpener, authStorePoll = oldOpener, oldPoll })
	return e
}

func (e *oauthEnv) browserOpens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.opened...)
}

// visit plays the browser: it GETs the authorization URL and follows the
// redirect to the trunk's listener, which must say it is authorised.
func visit(t *testing.T, authURL string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatalf("visiting the authorization URL: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "authorised") {
		t.Fatalf("the redirect ended with %d: %s", resp.StatusCode, body)
	}
	if !strings.HasPrefix(resp.Request.URL.String(), "http://127.0.0.1:") {
		t.Errorf("the redirect went to %s, want the loopback listener", resp.Request.URL.Host)
	}
}

var loggedURL = regexp.MustCompile(`needs authorisation: open this URL[^\n]* url=("(?:[^"\\]|\\.)*"|\S+)`)

// loggedAuthURL waits for the background flow to log the authorization URL.
func loggedAuthURL(t *testing.T, logs *logBuffer, skip int) string {
	t.Helper()
	var u string
	waitFor(t, "the authorization URL in the log", 10*time.Second, func() bool {
		m := loggedURL.FindAllStringSubmatch(logs.String(), -1)
		if len(m) <= skip {
			return false
		}
		u = m[skip][1]
		if strings.HasPrefix(u, `"`) {
			u, _ = strconv.Unquote(u)
		}
		return true
	})
	return u
}

// oauthHost is a Host logging at debug level into a buffer; restart says
// whether it restarts servers (like serve, which also authorises in the
// background) or not (like list, call and check).
type oauthHost struct {
	*Host
	logs *logBuffer

	mu      sync.Mutex
	changes int
}

func newOAuthHost(t *testing.T, restart bool) *oauthHost {
	t.Helper()
	h := &oauthHost{logs: &logBuffer{}}
	opts := &Options{
		Logger:  slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Version: "test",
		Events: Events{Changed: func(string) {
			h.mu.Lock()
			h.changes++
			h.mu.Unlock()
		}},
	}
	if restart {
		opts.Restart = RestartPolicy{MaxAttempts: 2, Backoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Stable: time.Minute}
	}
	h.Host = NewHost(opts)
	return h
}

func (h *oauthHost) changed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changes
}

func (h *oauthHost) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Errorf("closing the host: %v", err)
	}
}

// oauthSpec is a remote server as a user configures it for OAuth: a URL,
// nothing else.
func oauthSpec(t *testing.T, name, u string) config.Spec {
	t.Helper()
	c, err := config.Parse(strings.NewReader(fmt.Sprintf(`{"mcpServers": {%q: {"url": %q, "timeouts": {"connect": "5s", "list": "5s", "call": "10s"}}}}`, name, u)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return c.Servers[0]
}

// authorizeDirectly runs the flow the way "mcptrunk auth" does, visiting
// the printed URL.
func authorizeDirectly(t *testing.T, spec config.Spec) oauth.AuthResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := oauth.Authorize(ctx, spec, oauth.AuthorizeOptions{Prompt: func(u string) { visit(t, u) }})
	if err != nil {
		t.Fatalf("oauth.Authorize: %v", err)
	}
	return res
}

// storedToken is the part of a token file the tests look at.
type storedToken struct {
	Issuer       string `json:"issuer"`
	Resource     string `json:"resource"`
	ClientID     string `json:"clientId"`
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
}

func (r *storedToken) usable() bool { return r != nil && r.AccessToken != "" }

// storedRecord reads the token file of spec's server (nil when none).
func storedRecord(t *testing.T, spec config.Spec) *storedToken {
	t.Helper()
	file, err := oauth.TokenFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var rec storedToken
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("token file: %v", err)
	}
	return &rec
}

// checkTokenFiles checks the token directory is 0700 and holds one file,
// 0600, and returns that file's content.
func checkTokenFiles(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("the token directory holds %d entries, want 1", len(entries))
	}
	data, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		return string(data)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(dir, entries[0].Name())); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	return string(data)
}

// A server that answers 401 needs authorisation; a long-running trunk
// (restart policy) starts the flow in the background: it logs the URL and
// opens the browser, the user "visits" it, the redirect reaches the
// loopback listener, the code is exchanged with the PKCE verifier, the
// tokens are stored, and the server comes up with its tools.
func TestOAuthFirstAuthorisation(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixture(t)
	env := setupOAuthEnv(t)
	h := newOAuthHost(t, true)
	defer h.close(t)
	ctx := context.Background()
	spec := oauthSpec(t, "remote", f.mcpURL)

	startErr := h.StartAll(ctx, []config.Spec{spec})
	const hint = `needs authorisation: run "mcptrunk auth remote"`
	if startErr == nil || !strings.Contains(startErr.Error(), `server "remote"`) || !strings.Contains(startErr.Error(), hint) {
		t.Fatalf("StartAll: got %v, want an error saying %s", startErr, hint)
	}
	t.Logf("at start: %v", startErr)
	c, _ := h.Client("remote")
	if st := c.Status(); !strings.Contains(st.Error, hint) {
		t.Errorf("status %s: error %q, want it to say %s", st.State, st.Error, hint)
	}
	if _, err := callTool(ctx, c, "echo", map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("a call: got %v, want %s", err, hint)
	}

	authURL := loggedAuthURL(t, h.logs, 0)
	if opens := env.browserOpens(); len(opens) != 1 || opens[0] != authURL {
		t.Errorf("the browser was asked to open %q, want the logged URL once", opens)
	}
	before := h.changed()
	visit(t, authURL)

	waitFor(t, "the server to come up", 10*time.Second, func() bool {
		st, _ := c.State()
		return st == StateReady && len(c.Catalog().Tools) == 4
	})
	if h.changed() <= before {
		t.Error("no change was reported when the server came up")
	}
	raw, err := callTool(ctx, c, "echo", map[string]any{"text": "authorised"})
	if err != nil || toolText(t, raw) != "echo: authorised" {
		t.Fatalf("a call after authorising: %s, %v", raw, err)
	}
	if f.count("register") != 1 || f.count("code") != 1 {
		t.Errorf("registrations %d, code exchanges %d; want 1 and 1", f.count("register"), f.count("code"))
	}

	data := checkTokenFiles(t, env.dir)
	rec := storedRecord(t, spec)
	if !rec.usable() || rec.RefreshToken == "" || rec.ClientID == "" || rec.Resource != f.resource || rec.Issuer != f.issuer {
		t.Errorf("stored record lacks something: client %q, resource %q, issuer %q", rec.ClientID, rec.Resource, rec.Issuer)
	}
	if !strings.Contains(data, rec.AccessToken) {
		t.Error("the token file does not hold the access token")
	}

	h.close(t)
	f.checkNoSecrets("the log", h.logs.String())
	f.checkNoSecrets("the start error", startErr.Error())
}

// An access token that expires is refreshed before it is used; one the
// server refuses is refreshed and the request sent again. The caller sees
// neither.
func TestOAuthRefresh(t *testing.T) {
	t.Run("before expiry", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		f.set(func() { f.ttl = time.Second })
		setupOAuthEnv(t)
		spec := oauthSpec(t, "remote", f.mcpURL)
		authorizeDirectly(t, spec)
		first := storedRecord(t, spec)

		h := newOAuthHost(t, false)
		defer h.close(t)
		ctx := context.Background()
		if err := h.StartAll(ctx, []config.Spec{spec}); err != nil {
			t.Fatalf("StartAll: %v", err)
		}
		c, _ := h.Client("remote")
		<-c.Settled()
		time.Sleep(1100 * time.Millisecond) // the access token has expired
		refreshes, rejected := f.count("refresh"), f.count("401")
		raw, err := callTool(ctx, c, "echo", map[string]any{"text": "later"})
		if err != nil || toolText(t, raw) != "echo: later" {
			t.Fatalf("a call after expiry: %s, %v", raw, err)
		}
		if f.count("refresh") <= refreshes {
			t.Error("the token was not refreshed")
		}
		if f.count("401") != rejected {
			t.Error("the expired token was sent (and refused) instead of being refreshed first")
		}
		now := storedRecord(t, spec)
		if now.AccessToken == first.AccessToken || now.RefreshToken == first.RefreshToken {
			t.Error("the store does not hold the refreshed (and rotated) tokens")
		}
		h.close(t)
		f.checkNoSecrets("the log", h.logs.String())
	})
	t.Run("on 401", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		setupOAuthEnv(t)
		spec := oauthSpec(t, "remote", f.mcpURL)
		authorizeDirectly(t, spec)

		h := newOAuthHost(t, false)
		defer h.close(t)
		ctx := context.Background()
		if err := h.StartAll(ctx, []config.Spec{spec}); err != nil {
			t.Fatalf("StartAll: %v", err)
		}
		c, _ := h.Client("remote")
		<-c.Settled()
		f.revokeAccess() // the refresh token stays good
		raw, err := callTool(ctx, c, "echo", map[string]any{"text": "again"})
		if err != nil || toolText(t, raw) != "echo: again" {
			t.Fatalf("a call with a revoked access token: %s, %v", raw, err)
		}
		if f.count("refresh") != 1 || f.count("401") < 1 {
			t.Errorf("refreshes %d, 401s %d; want 1 refresh after a 401", f.count("refresh"), f.count("401"))
		}
		if st, _ := c.State(); st != StateReady {
			t.Errorf("state %s, want ready", st)
		}
		h.close(t)
		f.checkNoSecrets("the log", h.logs.String())
	})
}

// A revoked grant: the refresh is refused, the tokens are dropped, the call
// and the server's state say it needs authorisation with the command to
// run. A long-running trunk starts the flow again, and after it the server
// is back.
func TestOAuthRevoked(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "one-shot"
		if restart {
			name = "long-running"
		}
		t.Run(name, func(t *testing.T) {
			checkLeaks(t)
			f := newOAuthFixture(t)
			env := setupOAuthEnv(t)
			spec := oauthSpec(t, "remote", f.mcpURL)
			authorizeDirectly(t, spec)

			h := newOAuthHost(t, restart)
			defer h.close(t)
			ctx := context.Background()
			if err := h.StartAll(ctx, []config.Spec{spec}); err != nil {
				t.Fatalf("StartAll: %v", err)
			}
			c, _ := h.Client("remote")
			<-c.Settled()
			f.revokeAll()

			const hint = `needs authorisation (refreshing the token was refused: invalid_grant): run "mcptrunk auth remote"`
			_, err := callTool(ctx, c, "echo", map[string]any{"text": "x"})
			if err == nil || !strings.Contains(err.Error(), hint) || !strings.Contains(err.Error(), `server "remote"`) {
				t.Fatalf("a call after revocation: got %v, want it to say %s", err, hint)
			}
			t.Logf("the call: %v", err)
			if f.count("refused refresh_token") != 1 {
				t.Errorf("refused refreshes: %d, want 1", f.count("refused refresh_token"))
			}
			waitFor(t, "the state to say so", 5*time.Second, func() bool {
				st, stErr := c.State()
				return st != StateReady && stErr != nil && strings.Contains(stErr.Error(), `run "mcptrunk auth remote"`)
			})
			st, stErr := c.State()
			t.Logf("state %s: %v", st, stErr)
			if rec := storedRecord(t, spec); rec.usable() || rec.RefreshToken != "" || rec.ClientID == "" {
				t.Errorf("after revocation the store should keep the registration only (usable %v)", rec.usable())
			}
			if !restart {
				if len(env.browserOpens()) != 0 {
					t.Error("a one-shot host opened the browser")
				}
				if strings.Contains(h.logs.String(), "open this URL") {
					t.Error("a one-shot host started the authorisation flow")
				}
			} else {
				visit(t, loggedAuthURL(t, h.logs, 0))
				waitFor(t, "the server to come back", 10*time.Second, func() bool {
					st, _ := c.State()
					return st == StateReady && len(c.Catalog().Tools) == 4
				})
				if _, err := callTool(ctx, c, "echo", map[string]any{"text": "x"}); err != nil {
					t.Errorf("a call after authorising again: %v", err)
				}
				if f.count("register") != 1 {
					t.Errorf("registrations %d: the stored registration should have been used again", f.count("register"))
				}
			}
			h.close(t)
			f.checkNoSecrets("the log", h.logs.String())
			f.checkNoSecrets("the call's error", err.Error())
			f.checkNoSecrets("the state", stErr.Error())
		})
	}
}

// "mcptrunk auth" stored a token while a long-running trunk waited: the
// trunk notices it in the store and connects.
func TestOAuthTokenStoredElsewhere(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixture(t)
	setupOAuthEnv(t)
	t.Setenv(NoBrowserEnv, "1")
	spec := oauthSpec(t, "remote", f.mcpURL)
	h := newOAuthHost(t, true)
	defer h.close(t)
	if err := h.StartAll(context.Background(), []config.Spec{spec}); err == nil {
		t.Fatal("StartAll succeeded without a token")
	}
	loggedAuthURL(t, h.logs, 0) // the background flow waits
	authorizeDirectly(t, spec)  // as "mcptrunk auth remote" in another terminal
	c, _ := h.Client("remote")
	waitFor(t, "the server to come up", 10*time.Second, func() bool {
		st, _ := c.State()
		return st == StateReady
	})
	h.close(t)
	f.checkNoSecrets("the log", h.logs.String())
}

// oauth.Authorize (the "mcptrunk auth" flow): discovery through the well-known
// URI when the 401 names no metadata, and the refusals.
func TestOAuthAuthorize(t *testing.T) {
	t.Run("well-known discovery", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		f.set(func() { f.noMetadataParam = true })
		env := setupOAuthEnv(t)
		spec := oauthSpec(t, "remote", f.mcpURL)
		res := authorizeDirectly(t, spec)
		if !res.Refreshable || res.Expiry.IsZero() || res.Scope != "mcp:tools" || filepath.Dir(res.File) != env.dir {
			t.Errorf("result %+v", res)
		}
		checkTokenFiles(t, env.dir)
	})
	t.Run("no PKCE", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		f.set(func() { f.noPKCEMetadata = true })
		setupOAuthEnv(t)
		_, err := oauth.Authorize(context.Background(), oauthSpec(t, "remote", f.mcpURL), oauth.AuthorizeOptions{
			Prompt: func(string) { t.Error("the flow went on without PKCE") },
		})
		if err == nil || !strings.Contains(err.Error(), "PKCE") {
			t.Fatalf("got %v, want a refusal naming PKCE", err)
		}
	})
	t.Run("wrong state is ignored, timeout", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		setupOAuthEnv(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := oauth.Authorize(ctx, oauthSpec(t, "remote", f.mcpURL), oauth.AuthorizeOptions{
			Prompt: func(u string) {
				pu, _ := url.Parse(u)
				redirect := pu.Query().Get("redirect_uri")
				resp, err := http.Get(redirect + "?code=forged&state=wrong")
				if err != nil {
					t.Errorf("forged redirect: %v", err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("forged redirect: %d, want 400", resp.StatusCode)
				}
				http.DefaultClient.CloseIdleConnections()
			},
		})
		if err == nil || !strings.Contains(err.Error(), "timed out waiting for the authorization redirect") {
			t.Fatalf("got %v, want a timeout", err)
		}
		if f.count("code") != 0 {
			t.Error("a forged code was exchanged")
		}
	})
	t.Run("not for static tokens or stdio", func(t *testing.T) {
		spec := remoteConfig(t, "remote", "http", "http://127.0.0.1:1/mcp", "")
		if _, err := oauth.Authorize(context.Background(), spec, oauth.AuthorizeOptions{}); err == nil || !strings.Contains(err.Error(), "Authorization header") {
			t.Errorf("static token: %v", err)
		}
		if _, err := oauth.Authorize(context.Background(), config.Spec{Name: "x", Type: config.TransportStdio, Command: "x"}, oauth.AuthorizeOptions{}); err == nil || !strings.Contains(err.Error(), "not a remote server") {
			t.Errorf("stdio: %v", err)
		}
	})
}

// A server with a static Authorization header never touches the store, and
// its 401 keeps the old message.
func TestOAuthNotUsedWithStaticHeader(t *testing.T) {
	if remoteConfig(t, "remote", "http", "http://127.0.0.1:1/mcp", "").UsesOAuth() {
		t.Error("OAuth applies to a server with an Authorization header")
	}
}

func TestOAuthSSE(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixtureOf(t, "sse")
	env := setupOAuthEnv(t)
	h := newOAuthHost(t, true)
	defer h.close(t)
	ctx := context.Background()
	c, err := func() (*Client, error) {
		spec := oauthSpec(t, "remote", f.mcpURL)
		spec.Type = config.TransportSSE
		err := h.StartAll(ctx, []config.Spec{spec})
		c, _ := h.Client("remote")
		return c, err
	}()
	if err == nil || !strings.Contains(err.Error(), `needs authorisation: run "mcptrunk auth remote"`) {
		t.Fatalf("StartAll: %v", err)
	}
	visit(t, loggedAuthURL(t, h.logs, 0))
	waitFor(t, "the server to come up", 10*time.Second, func() bool {
		st, _ := c.State()
		return st == StateReady && len(c.Catalog().Tools) == 4
	})
	raw, err := callTool(ctx, c, "echo", map[string]any{"text": "sse"})
	if err != nil || toolText(t, raw) != "echo: sse" {
		t.Fatalf("a call: %s, %v", raw, err)
	}
	checkTokenFiles(t, env.dir)
	h.close(t)
	f.checkNoSecrets("the log", h.logs.String())
}

// A server that echoes the Authorization header in an error: the token is
// redacted from the error and the log.
func TestOAuthTokenNotEchoed(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixture(t)
	setupOAuthEnv(t)
	spec := oauthSpec(t, "remote", f.mcpURL)
	authorizeDirectly(t, spec)
	h := newOAuthHost(t, false)
	defer h.close(t)
	ctx := context.Background()
	if err := h.StartAll(ctx, []config.Spec{spec}); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	c, _ := h.Client("remote")
	<-c.Settled()
	f.set(func() { f.echoStatus = http.StatusForbidden })
	_, err := callTool(ctx, c, "echo", map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("got %v, want the 403 with the token redacted", err)
	}
	h.close(t)
	f.checkNoSecrets("the error", err.Error())
	f.checkNoSecrets("the log", h.logs.String())
}

// "mcptrunk auth" for a server that does not use OAuth says so.
func TestOAuthAuthorizeServerWithoutOAuth(t *testing.T) {
	checkLeaks(t)
	setupOAuthEnv(t)
	r := startRemote(t, "http")
	_, err := oauth.Authorize(context.Background(), oauthSpec(t, "plain", r.url), oauth.AuthorizeOptions{
		Prompt: func(string) { t.Error("the flow went on") },
	})
	if err == nil || !strings.Contains(err.Error(), "does not seem to use OAuth") {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
	if n := r.rec.count(http.MethodDelete, ""); n != 1 {
		t.Errorf("the probe's session was not ended (%d DELETEs)", n)
	}
}
