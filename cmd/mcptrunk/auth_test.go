package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/upstream"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// "mcptrunk auth" end to end, in process: a remote MCP server that demands
// OAuth tokens and a small authorization server (both on 127.0.0.1), a
// config that names the server by its URL only. list says the server needs
// authorisation; auth prints the URL, the test plays the browser, auth
// stores the token; list then shows the server's tools; auth --logout
// removes the token. (TestMain checks that no goroutine is left behind.)

type authFixture struct {
	as, rs   *httptest.Server
	mcpURL   string
	issuer   string
	mcp      http.Handler
	mu       sync.Mutex
	clients  map[string]string // client id -> redirect uri
	codes    map[string][3]string
	access   map[string]bool
	secrets  []string
	verified int
}

// loopbackServer serves h on a free port of 127.0.0.1.
func loopbackServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv
}

// newSecret is a fresh secret value beginning with prefix, for the
// checks that no secret reaches a log.
func newSecret(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + "-" + base64.RawURLEncoding.EncodeToString(b)
}

func newAuthFixture(t *testing.T) *authFixture {
	t.Helper()
	f := &authFixture{clients: map[string]string{}, codes: map[string][3]string{}, access: map[string]bool{}}
	s := mcpserver.NewMCPServer("oauth-test", "1.0.0", mcpserver.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text."), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	f.mcp = mcpserver.NewStreamableHTTPServer(s)
	f.as = loopbackServer(t, http.HandlerFunc(f.serveAS))
	f.rs = loopbackServer(t, http.HandlerFunc(f.serveRS))
	f.issuer = f.as.URL
	f.mcpURL = f.rs.URL + "/mcp"
	t.Cleanup(func() {
		f.rs.CloseClientConnections()
		f.rs.Close()
		f.as.CloseClientConnections()
		f.as.Close()
	})
	return f
}

// writeJSON answers with status and v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *authFixture) serveRS(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		writeJSON(w, http.StatusOK, map[string]any{"resource": f.mcpURL, "authorization_servers": []string{f.issuer}})
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	ok := f.access[tok]
	f.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, f.rs.URL))
		http.Error(w, "unauthorized: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
		return
	}
	f.mcp.ServeHTTP(w, r)
}

func (f *authFixture) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": f.issuer, "authorization_endpoint": f.issuer + "/authorize", "token_endpoint": f.issuer + "/token",
			"registration_endpoint": f.issuer + "/register", "code_challenge_methods_supported": []string{"S256"},
		})
	case "/register":
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) != 1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		id := fmt.Sprintf("client-%d", len(f.clients)+1)
		f.clients[id] = req.RedirectURIs[0]
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id})
	case "/authorize":
		q := r.URL.Query()
		if f.clients[q.Get("client_id")] != q.Get("redirect_uri") || q.Get("code_challenge_method") != "S256" || q.Get("resource") != f.mcpURL {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		code := newSecret("code")
		f.secrets = append(f.secrets, code)
		f.codes[code] = [3]string{q.Get("client_id"), q.Get("redirect_uri"), q.Get("code_challenge")}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		g, ok := f.codes[r.PostForm.Get("code")]
		delete(f.codes, r.PostForm.Get("code"))
		f.secrets = append(f.secrets, r.PostForm.Get("code_verifier"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g[0] != r.PostForm.Get("client_id") || g[1] != r.PostForm.Get("redirect_uri") ||
			g[2] != base64.RawURLEncoding.EncodeToString(sum[:]) || r.PostForm.Get("resource") != f.mcpURL {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		f.verified++
		access, refresh := newSecret("access"), newSecret("refresh")
		f.secrets = append(f.secrets, access, refresh)
		f.access[access] = true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "refresh_token": refresh, "expires_in": 3600})
	default:
		http.NotFound(w, r)
	}
}

func (f *authFixture) checkNoSecrets(t *testing.T, what, text string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s contains the secret %q:\n%s", what, s, text)
		}
	}
}

// runInProcess runs the command line args in this process (run, as main
// does), with no stdin, and returns its output.
func runInProcess(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errb testkit.Buffer
	err = run(ctx, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func TestAuthCommand(t *testing.T) {
	f := newAuthFixture(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	t.Setenv(oauth.TokenDirEnv, tokens)
	t.Setenv(upstream.NoBrowserEnv, "1")
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {
		"remote": {"url": %q, "timeouts": {"connect": "5s", "list": "5s"}},
		"local": {"command": "true"}}}`, f.mcpURL)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var transcript strings.Builder

	// Before: list says what to do.
	out, errOut, err := runInProcess(ctx, "list", "--config", cfg)
	transcript.WriteString(out + errOut)
	const hint = `needs authorisation: run "mcptrunk auth remote"`
	if err != nil || !strings.Contains(out, hint) {
		t.Fatalf("list before auth: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}

	// auth: the URL on stderr, the test visits it, success on stdout.
	var authOut, authErr testkit.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"auth", "--config", cfg, "--timeout", "30s", "remote"}, strings.NewReader(""), &authOut, &authErr)
	}()
	urlLine := regexp.MustCompile(`(?m)^  (http://\S+)$`)
	var authURL string
	deadline := time.Now().Add(10 * time.Second)
	for authURL == "" {
		if m := urlLine.FindStringSubmatch(authErr.String()); m != nil {
			authURL = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("auth ended before printing a URL: %v\nstderr:\n%s", err, authErr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("auth printed no URL:\n%s", authErr.String())
		}
	}
	if !strings.Contains(authErr.String(), `open this URL in a browser`) || authOut.String() != "" {
		t.Errorf("the prompt belongs on stderr; stdout so far: %q", authOut.String())
	}
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(authURL)
	if err != nil {
		t.Fatalf("visiting the URL: %v", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "authorised") {
		t.Errorf("the redirect page: %d %s", resp.StatusCode, page)
	}
	if err := <-done; err != nil {
		t.Fatalf("auth: %v\nstderr:\n%s", err, authErr.String())
	}
	transcript.WriteString(authOut.String() + authErr.String())
	if !strings.Contains(authOut.String(), `server "remote": authorised`) || !strings.Contains(authOut.String(), tokens) {
		t.Errorf("auth stdout:\n%s", authOut.String())
	}
	if f.verified != 1 {
		t.Errorf("code exchanges with a valid verifier: %d, want 1", f.verified)
	}
	entries, _ := os.ReadDir(tokens)
	if len(entries) != 1 {
		t.Fatalf("token directory holds %d files, want 1", len(entries))
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(filepath.Join(tokens, entries[0].Name()))
		di, _ := os.Stat(tokens)
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("token file %v, directory %v; want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
		}
	}

	// After: the server is up, its tools listed.
	out, errOut, err = runInProcess(ctx, "list", "--config", cfg)
	transcript.WriteString(out + errOut)
	if err != nil || !strings.Contains(out, "mcp__remote__echo") || strings.Contains(out, "needs authorisation") {
		t.Errorf("list after auth: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	out, errOut, err = runInProcess(ctx, "call", "--config", cfg, "mcp__remote__echo", `{"text":"hi"}`)
	transcript.WriteString(out + errOut)
	if err != nil || !strings.Contains(out, "echo: hi") {
		t.Errorf("call after auth: %v\n%s%s", err, out, errOut)
	}

	// Logout removes the token; list needs authorisation again.
	out, errOut, err = runInProcess(ctx, "auth", "--config", cfg, "--logout", "remote")
	transcript.WriteString(out + errOut)
	if err != nil || !strings.Contains(out, "stored tokens removed") {
		t.Errorf("auth --logout: %v\n%s%s", err, out, errOut)
	}
	if entries, _ := os.ReadDir(tokens); len(entries) != 0 {
		t.Errorf("the token file is still there after --logout")
	}

	// Mistakes.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"auth", "--config", cfg}, "usage"},
		{[]string{"auth", "--config", cfg, "nosuch"}, `no server "nosuch" in the config (remote servers: remote)`},
		{[]string{"auth", "--config", cfg, "local"}, `server "local" is not a remote server`},
	} {
		out, errOut, err := runInProcess(ctx, tt.args...)
		if err == nil {
			t.Errorf("%v succeeded", tt.args)
			continue
		}
		if msg := err.Error() + errOut; !strings.Contains(msg, tt.want) && !(tt.want == "usage" && errors.Is(err, errUsage)) {
			t.Errorf("%v: %v %s%s; want %q", tt.args, err, out, errOut, tt.want)
		}
	}

	f.checkNoSecrets(t, "the commands' output", transcript.String())
	t.Logf("transcript:\n%s", transcript.String())
}

// serve authorises by itself: the remote server needs authorisation at
// start, the trunk logs the URL on stderr (stdout is the protocol), the
// test visits it, and the host is told with list_changed that the server's
// tools are there.
func TestAuthServe(t *testing.T) {
	authInBackground(t, func(f *authFixture, dir string) []string {
		cfg := filepath.Join(dir, "config.json")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"remote": {"url": %q}}}`, f.mcpURL)), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"serve", "--config", cfg}
	}, "mcp__remote__echo")
}

// mcptrunk connect authorises as serve does (it is the same trunk), and
// the server's tool appears under its own name.
func TestAuthConnect(t *testing.T) {
	authInBackground(t, func(f *authFixture, _ string) []string {
		return []string{"connect", "--name", "remote", f.mcpURL}
	}, "echo")
}

// authInBackground runs the command args gives for the fixture's server
// (called "remote") as a stdio MCP server, plays the browser for the URL it
// logs, and calls the server's tool, named tool on the host's side, once
// the host has been told that the tools changed.
func authInBackground(t *testing.T, args func(f *authFixture, dir string) []string, tool string) {
	f := newAuthFixture(t)
	dir := t.TempDir()
	t.Setenv(oauth.TokenDirEnv, filepath.Join(dir, "tokens"))
	t.Setenv(upstream.NoBrowserEnv, "1")
	argv := args(f, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr testkit.Buffer
	served := make(chan error, 1)
	go func() {
		err := run(ctx, argv, inR, outW, &stderr)
		outW.Close()
		served <- err
	}()
	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "auth-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	session, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting to the trunk: %v", err)
	}
	defer func() {
		session.Close()
		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("%s: %v", argv[0], err)
		}
		f.checkNoSecrets(t, argv[0]+"'s stderr", stderr.String())
		t.Logf("%s's stderr:\n%s", argv[0], stderr.String())
	}()
	names := func() []string {
		res, err := session.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(); slices.Contains(got, tool) {
		t.Fatalf("tools before authorising: %v", got)
	}

	logged := regexp.MustCompile(`open this URL[^\n]*url=("(?:[^"\\]|\\.)*"|\S+)`)
	var authURL string
	waitFor(ctx, 10*time.Second, func() bool {
		m := logged.FindStringSubmatch(stderr.String())
		if m == nil {
			return false
		}
		authURL = m[1]
		if u, err := strconv.Unquote(authURL); err == nil {
			authURL = u
		}
		return true
	})
	if authURL == "" {
		t.Fatalf("%s logged no authorisation URL:\n%s", argv[0], stderr.String())
	}
	if !strings.Contains(stderr.String(), `needs authorisation: run \"mcptrunk auth remote\"`) {
		t.Errorf("%s's log does not say what to do:\n%s", argv[0], stderr.String())
	}
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(authURL)
	if err != nil {
		t.Fatalf("visiting the URL: %v", err)
	}
	resp.Body.Close()
	tr.CloseIdleConnections()

	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatalf("no tools/list_changed after authorising; stderr:\n%s", stderr.String())
	}
	if !waitFor(ctx, 5*time.Second, func() bool { return slices.Contains(names(), tool) }) {
		t.Fatalf("the server's tools did not appear: %v", names())
	}
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"text": "served"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("calling the tool: %v %+v", err, res)
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != "echo: served" {
		t.Errorf("tool result %+v", res.Content[0])
	}
}
