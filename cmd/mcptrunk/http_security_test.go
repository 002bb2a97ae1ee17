package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// A listener other hosts on the network can reach never starts without a
// token.
func TestHTTPNonLoopbackNeedsToken(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	_, stderr, code := runCLI(t, 30*time.Second, "serve", "--http", "0.0.0.0:0", "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "--token-file") || !strings.Contains(stderr, "not a loopback address") {
		t.Fatalf("serve --http 0.0.0.0:0 without a token: exit %d, stderr:\n%s", code, stderr)
	}
}

// The listener's rules, each answered with its HTTP status and a message:
// the token (401 with WWW-Authenticate), Origin (403), Host (403), the
// body limit (413), the session limit (503), requests in flight per
// session (429), forged and expired sessions (404). The token never shows
// in the logs.
func TestHTTPListenerRules(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	dir := t.TempDir()
	const token = "tok-3a9f1c0de5b7-never-logged"
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]server{"conformance": pin2025(server{"command": conformanceBin(t)})}, map[string]any{
		"http": map[string]any{"tokenFile": tokenFile, "maxBodyBytes": 4096, "maxSessions": 2, "maxInFlight": 1, "sessionIdleTimeout": "4s"},
	})
	trunk := startHTTPTrunk(t, ctx, cfg)
	auth := map[string]string{"Authorization": "Bearer " + token}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + token}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	expect := func(what string, r httpReply, err error, status int, says string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if r.status != status || !strings.Contains(strings.Join(r.messages, "\n"), says) {
			t.Errorf("%s: HTTP %d %q, want %d saying %q", what, r.status, r.messages, status, says)
		}
	}

	r, err := postMCP(ctx, trunk.url, initializeBody, nil)
	expect("no token", r, err, http.StatusUnauthorized, "bearer token is required")
	if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Errorf("401 without WWW-Authenticate: %q", got)
	}
	r, err = postMCP(ctx, trunk.url, initializeBody, map[string]string{"Authorization": "Bearer " + token + "x"})
	expect("a wrong token", r, err, http.StatusUnauthorized, "bearer token is required")
	r, err = postMCP(ctx, trunk.url, initializeBody, with(map[string]string{"Origin": "http://evil.example"}))
	expect("a foreign Origin", r, err, http.StatusForbidden, "origin http://evil.example")
	r, err = postMCP(ctx, trunk.url, initializeBody, with(map[string]string{"Host": "evil.example"}))
	expect("a Host that is not this machine", r, err, http.StatusForbidden, "Host header")
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	r, err = postMCP(ctx, trunk.url, big, auth)
	expect("an oversized body", r, err, http.StatusRequestEntityTooLarge, "larger than 4096 bytes")
	r, err = postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, with(map[string]string{"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"}))
	expect("a forged session id", r, err, http.StatusNotFound, "unknown or expired session")
	// Bodies that are not one JSON-RPC message: each refused saying why.
	for _, bad := range []struct{ body, says string }{
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "batches are not supported"},
		{`{"jsonrpc":"2.0","id":1,`, "the body is not JSON"},
		{`{"hello":"world"}`, "not a JSON-RPC message"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "no Mcp-Session-Id header"},
	} {
		r, err = postMCP(ctx, trunk.url, bad.body, auth)
		expect("the body "+bad.body, r, err, http.StatusBadRequest, bad.says)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(strings.TrimSuffix(trunk.url, "/mcp") + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s without a token: %v %v (health checks need none)", path, resp.Status, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}

	// Sessions: two open whose hosts finished their handshake, a third
	// refused; a request held in flight in one (an elicitation nobody
	// answers) makes its next 429.
	var ids []string
	for range 2 {
		r, err := postMCP(ctx, trunk.url, initializeBody, auth)
		expect("initialize", r, err, http.StatusOK, `"protocolVersion"`)
		id := r.header.Get("Mcp-Session-Id")
		ids = append(ids, id)
		r, err = postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Authorization": auth["Authorization"], "Mcp-Session-Id": id})
		expect("notifications/initialized", r, err, http.StatusAccepted, "")
	}
	if len(ids[0]) < 32 || ids[0] == ids[1] {
		t.Errorf("session ids %q: want distinct random ids of 128 bits", ids)
	}
	r, err = postMCP(ctx, trunk.url, initializeBody, auth)
	expect("a third session", r, err, http.StatusServiceUnavailable, "too many sessions")

	// The status page and /metrics share the listener and its rules; the
	// metrics count the two sessions.
	base := strings.TrimSuffix(trunk.url, "/mcp")
	get := func(path string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/metrics", nil); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: HTTP %d, want 401", code)
	}
	if code, body := get("/metrics", auth); code != http.StatusOK || !regexp.MustCompile(`(?m)^mcptrunk_sessions(\{[^}]*\})? 2$`).MatchString(body) {
		t.Errorf("/metrics with the token: HTTP %d, want 200 counting 2 sessions:\n%s", code, tail(body, 2000))
	}
	if code, _ := get("/", nil); code != http.StatusUnauthorized {
		t.Errorf("the status page without the token: HTTP %d, want 401", code)
	}
	if code, body := get("/?token="+token, nil); code != http.StatusOK || !strings.Contains(body, "conformance") {
		t.Errorf("the status page with ?token=: HTTP %d, want 200 naming the server", code)
	}
	if code, _ := get("/?token="+token, map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Errorf("the status page from a foreign origin: HTTP %d, want 403", code)
	}

	// A request held in flight: the elicitation its call causes reaches
	// this raw client, which never answers it.
	held, cancelHeld := context.WithCancel(ctx)
	defer cancelHeld()
	stream := openSSE(t, sessionRequest(t, held, http.MethodPost, trunk.url, ids[0],
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"mcp__conformance__test_elicitation","arguments":{"message":"hold"}}}`,
		map[string]string{"Authorization": "Bearer " + token}))
	defer stream.close()
	if ev, ok := stream.next(); !ok || !strings.Contains(ev.data, `"elicitation/create"`) {
		t.Fatalf("the held call's stream: %+v, %v; want the server's elicitation", ev, ok)
	}
	r, err = postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":11,"method":"ping"}`, with(map[string]string{"Mcp-Session-Id": ids[0]}))
	expect("a second request while one is in flight (maxInFlight 1)", r, err, http.StatusTooManyRequests, "too many requests in flight")

	// The other session, left alone, expires (sessionIdleTimeout 4s: long
	// enough for the first one to live through the steps above on a loaded
	// machine, where 1s was not): the trunk says so, and its id is unknown
	// from then on.
	if _, err := waitStderrLine(ctx, trunk.stderr, 30*time.Second, "session expired", ids[1]); err != nil {
		t.Fatalf("the idle session never expired: %v", err)
	}
	r, err = postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, with(map[string]string{"Mcp-Session-Id": ids[1]}))
	expect("an expired session", r, err, http.StatusNotFound, "unknown or expired session")
	cancelHeld()

	if strings.Contains(trunk.stderr.String(), token) {
		t.Errorf("the token is in the logs:\n%s", trunk.stderr)
	}
}

// A token file that does not exist is created, 0600, with a new token, and
// the listener asks for it.
func TestHTTPTokenFileCreated(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	tokenFile := filepath.Join(t.TempDir(), "new-token")
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"http": map[string]any{"tokenFile": tokenFile}})
	trunk := startHTTPTrunk(t, ctx, cfg)
	st, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(data))
	if len(token) < 32 {
		t.Fatalf("token %d characters long, want a random one of at least 32", len(token))
	}
	r, err := postMCP(ctx, trunk.url, initializeBody, nil)
	if err != nil || r.status != http.StatusUnauthorized {
		t.Errorf("without the token: %v %d", err, r.status)
	}
	r, err = postMCP(ctx, trunk.url, initializeBody, map[string]string{"Authorization": "Bearer " + token})
	if err != nil || r.status != http.StatusOK {
		t.Errorf("with the created token: %v %d %q", err, r.status, r.messages)
	}
	if strings.Contains(trunk.stderr.String(), token) {
		t.Errorf("the token is in the logs")
	}
}
