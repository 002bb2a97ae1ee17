package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/proxy/signin"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// stateRig is a team trunk's config with a server whose callers each sign
// in (who, credentials mode "oauth") and one that needs nobody's
// (weather), keeping its state as trunk.state says; the trunk's own
// sign-in, for listing who, is done.
type stateRig struct {
	iss    *testissuer.Issuer
	who    *testkit.Whoami
	cfg    string
	static string // the static token: the status page and /metrics
}

func newStateRig(t *testing.T, state map[string]any) *stateRig {
	t.Helper()
	r := &stateRig{iss: testissuer.New(t), static: strings.Repeat("s", 40)}
	r.who = testkit.StartWhoamiSignIn(t, r.iss.URL)
	t.Setenv(oauth.TokenDirEnv, t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	admin := r.iss.Browser(t, "trunk-admin")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := oauth.Authorize(ctx, oauth.Server{Name: "who", URL: r.who.URL}, oauth.AuthorizeOptions{Prompt: func(u string) {
		if status, page := testissuer.Visit(t, admin, u); status != http.StatusOK {
			t.Errorf("the trunk's own sign-in: %d %s", status, page)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := map[string]any{
		"mcpServers": map[string]any{
			"who":     map[string]any{"url": r.who.URL, "credentials": map[string]any{"mode": "oauth"}},
			"weather": map[string]any{"command": weatherBin},
		},
		"trunk": map[string]any{"http": map[string]any{"auth": map[string]any{"issuer": r.iss.URL, "resource": "${TRUNK_URL}/mcp"}}, "state": state},
	}
	data, _ := json.Marshal(cfg)
	r.cfg = filepath.Join(dir, "mcptrunk.json")
	if err := os.WriteFile(r.cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(r.static), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// writeStateKey writes a sealing key into dir and returns its path.
func writeStateKey(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "state.key")
	if err := os.WriteFile(p, []byte(strings.Repeat("c3", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// freePort is a loopback port free now: a trunk restarted on it keeps
// its URL, which its callers' tokens name.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs serve --http on port with env added.
func (r *stateRig) start(t *testing.T, ctx context.Context, name string, port int, env ...string) *httpTrunk {
	t.Helper()
	cmd := trunkCmd(newTag(t), "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--config", r.cfg, "--token-file", filepath.Join(filepath.Dir(r.cfg), "token"))
	cmd.Env = append(cmd.Env, append(env, fmt.Sprintf("TRUNK_URL=http://127.0.0.1:%d", port))...)
	return serveHTTP(t, ctx, name, cmd)
}

// host is sub's host (go-sdk's, the stateless revision: a sign-in is the
// error carrying its URL) connected to trunk.
func (r *stateRig) host(t *testing.T, ctx context.Context, trunk *httpTrunk, sub string) *mcp.ClientSession {
	t.Helper()
	return teamClient(t, ctx, trunk.url, r.iss.Token(t, sub, trunk.url, nil))
}

// whoami calls who's whoami and returns whom the server saw.
func whoami(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__who__whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", errors.New("an empty result")
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil || res.IsError {
		return "", fmt.Errorf("the call failed: %+v", res.Content[0])
	}
	sub, _, err := testkit.WhoamiAnswer(text.Text)
	return sub, err
}

// signInLink is the sign-in URL of the URLElicitationRequiredError err
// must be; "" (and a test error) when it is not one.
func signInLink(t *testing.T, err error) string {
	t.Helper()
	var e *sdkrpc.Error
	if !errors.As(err, &e) || e.Code != signin.CodeURLElicitationRequired {
		t.Errorf("%v; want a URLElicitationRequiredError (asked to sign in)", err)
		return ""
	}
	var data struct {
		Elicitations []mcp.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("its data %s (%v); want one URL elicitation", e.Data, err)
	}
	return data.Elicitations[0].URL
}

// signInThrough signs sub in to who through trunk, as the host and the
// browser do: the first call asks, the browser signs in, the retry goes
// through as sub.
func (r *stateRig) signInThrough(t *testing.T, ctx context.Context, cs *mcp.ClientSession, sub string) {
	t.Helper()
	_, err := whoami(ctx, cs)
	link := signInLink(t, err)
	if link == "" {
		t.FailNow()
	}
	if status, page := testissuer.Visit(t, r.iss.Browser(t, sub), link); status != http.StatusOK || !strings.Contains(page, "Signed in to who") {
		t.Fatalf("%s's sign-in: %d %s", sub, status, page)
	}
	if got, err := whoami(ctx, cs); err != nil || got != sub {
		t.Fatalf("%s's call after signing in: the server saw %q (%v)", sub, got, err)
	}
}

// get is the status and body of a GET of url with the static token.
func (r *stateRig) get(t *testing.T, ctx context.Context, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.static)
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A caller signs in once; the trunk, restarted on the same embedded store,
// lets the caller's next call through without asking again; the store's
// file holds none of the tokens in the clear.
func TestSignInOutlivesARestartWithTheEmbeddedStore(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	r := newStateRig(t, map[string]any{"path": db, "keyFile": writeStateKey(t, dir)})
	port := freePort(t)

	first := r.start(t, ctx, "mcptrunk serve --http (before the restart)", port)
	r.signInThrough(t, ctx, r.host(t, ctx, first, "bob"), "bob")
	first.shutdown(20 * time.Second)

	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, is := range r.iss.Issued() {
		if is.Subject == "bob" {
			n++
			if bytes.Contains(raw, []byte(is.Token)) {
				t.Errorf("the store's file holds bob's %s token in the clear", is.Grant)
			}
		}
	}
	if n == 0 {
		t.Fatal("the issuer minted nothing for bob: the sign-in did not happen")
	}

	second := r.start(t, ctx, "mcptrunk serve --http (after the restart)", port)
	if got, err := whoami(ctx, r.host(t, ctx, second, "bob")); err != nil || got != "bob" {
		t.Errorf("bob's call after the restart: the server saw %q (%v); want bob, without signing in again", got, err)
	}
	// Another caller was never signed in: asked, as before.
	_, err = whoami(ctx, r.host(t, ctx, second, "carol"))
	signInLink(t, err)
}

// Two replicas over one Redis: a sign-in through one lets the other call
// without asking; a revocation at the issuer found by one makes the
// other ask again. With Redis stopped, calls that need no store go on,
// the store is reported down (/readyz, status, metric) and a call that
// needs a sign-in says the store is unavailable rather than asking; with
// Redis back (its append-only file), both recover with nothing lost.
func TestSignInSharedByReplicasOverRedis(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	redis := testkit.StartRedis(t, testkit.RedisOptions{Persist: true})
	dir := t.TempDir()
	r := newStateRig(t, map[string]any{"url": "${REDIS_URL}", "keyFile": writeStateKey(t, dir)})
	env := "REDIS_URL=" + redis.URL()
	a := r.start(t, ctx, "mcptrunk serve --http (replica a)", freePort(t), env)
	b := r.start(t, ctx, "mcptrunk serve --http (replica b)", freePort(t), env)

	bobA, bobB := r.host(t, ctx, a, "bob"), r.host(t, ctx, b, "bob")
	r.signInThrough(t, ctx, bobA, "bob")
	if got, err := whoami(ctx, bobB); err != nil || got != "bob" {
		t.Fatalf("bob's call through the other replica: the server saw %q (%v); want bob, without signing in again", got, err)
	}
	carolB := r.host(t, ctx, b, "carol")
	r.signInThrough(t, ctx, carolB, "carol")

	// Redis stopped mid-run.
	redis.Stop()
	for _, tr := range []*httpTrunk{a, b} {
		if !waitFor(ctx, 20*time.Second, func() bool {
			code, body := r.get(t, ctx, "http://"+tr.addr+"/readyz")
			return code == http.StatusOK && strings.Contains(body, "degraded: state store (redis) unavailable")
		}) {
			code, body := r.get(t, ctx, "http://"+tr.addr+"/readyz")
			t.Fatalf("%s /readyz with Redis stopped: %d %q; want 200 saying the store is unavailable", tr.name, code, body)
		}
	}
	if _, body := r.get(t, ctx, "http://"+a.addr+"/metrics"); !strings.Contains(body, `mcptrunk_state_store_up{kind="redis"`) || !strings.Contains(body, "} 0") {
		t.Errorf("/metrics with Redis stopped lacks mcptrunk_state_store_up 0:\n%s", grepLines(body, "state_store"))
	}
	if _, page := r.get(t, ctx, "http://"+a.addr+"/"); !strings.Contains(page, "state store") || !strings.Contains(page, "DOWN") {
		t.Errorf("the status page with Redis stopped does not say the store is down")
	}
	if _, err := bobA.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__weather__forecast", Arguments: map[string]any{"city": "Oslo"}}); err != nil {
		t.Errorf("a call that needs no store, with Redis stopped: %v", err)
	}
	if res, err := bobA.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__trunk__status", Arguments: map[string]any{}}); err != nil || len(res.Content) == 0 {
		t.Errorf("mcp__trunk__status with Redis stopped: %v", err)
	} else if text, _ := res.Content[0].(*mcp.TextContent); text == nil || !strings.Contains(text.Text, `"stateStore":{"kind":"redis","up":false`) || strings.Contains(text.Text, redis.Addr()) {
		t.Errorf("mcp__trunk__status with Redis stopped does not say it is down (or says where it is): %+v", res.Content[0])
	}
	_, err := whoami(ctx, bobB)
	var e *sdkrpc.Error
	if !errors.As(err, &e) || e.Code == signin.CodeURLElicitationRequired || !strings.Contains(err.Error(), "the state store (redis, trunk.state) is unavailable") {
		t.Errorf("bob's signed-in call with Redis stopped: %v; want an error naming the store, not a sign-in", err)
	}

	redis.Start()
	for _, tr := range []*httpTrunk{a, b} {
		if !waitFor(ctx, 20*time.Second, func() bool {
			code, body := r.get(t, ctx, "http://"+tr.addr+"/readyz")
			return code == http.StatusOK && !strings.Contains(body, "degraded")
		}) {
			t.Fatalf("%s /readyz never recovered after Redis came back", tr.name)
		}
	}
	if _, body := r.get(t, ctx, "http://"+b.addr+"/metrics"); !strings.Contains(body, `mcptrunk_state_store_up{kind="redis"`) || !strings.Contains(body, "} 1") {
		t.Errorf("/metrics with Redis back lacks mcptrunk_state_store_up 1:\n%s", grepLines(body, "state_store"))
	}
	for _, c := range []struct {
		cs  *mcp.ClientSession
		sub string
	}{{bobB, "bob"}, {bobA, "bob"}, {carolB, "carol"}} {
		if got, err := whoami(ctx, c.cs); err != nil || got != c.sub {
			t.Errorf("%s's call with Redis back: the server saw %q (%v); want the sign-in written before the outage", c.sub, got, err)
		}
	}

	// Revoked at the issuer and the server: the replica whose call meets
	// the refusal deletes the sign-in, and the other asks again.
	r.who.Revoke("bob")
	r.iss.RevokeRefresh("bob")
	if _, err := whoami(ctx, bobB); err == nil {
		t.Error("a call with a revoked grant went through")
	}
	_, err = whoami(ctx, bobA)
	signInLink(t, err)

	// The record at rest holds no token in the clear.
	raw := redisValues(t, ctx, redis)
	for _, is := range r.iss.Issued() {
		if is.Subject == "carol" && strings.Contains(raw, is.Token) {
			t.Errorf("Redis holds carol's %s token in the clear", is.Grant)
		}
	}
	if !strings.Contains(raw, "signin/who/") {
		t.Errorf("Redis holds no sign-in record: %q", raw)
	}
	// Neither replica logged a token, the key or Redis's URL with a secret.
	for _, tr := range []*httpTrunk{a, b} {
		log := tr.stderr.String()
		for _, is := range r.iss.Issued() {
			if strings.Contains(log, is.Token) {
				t.Errorf("%s logged a %s token of %s", tr.name, is.Grant, is.Subject)
			}
		}
		if strings.Contains(log, strings.Repeat("c3", 32)) {
			t.Errorf("%s logged the sealing key", tr.name)
		}
	}
}

// grepLines is the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// redisValues is every key and value in srv, one "key=value" a line: what
// Redis holds at rest.
func redisValues(t *testing.T, ctx context.Context, srv *testkit.RedisServer) string {
	t.Helper()
	c := redisconn.New(redisconn.Options{Addr: srv.Addr()})
	defer c.Close()
	keys, err := redisconn.Strings(c.Do(ctx, "KEYS", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range keys {
		v, err := redisconn.Bytes(c.Do(ctx, "GET", k))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(k + "=" + string(v) + "\n")
	}
	return b.String()
}

// mcptrunk check shows the state store: its kind, where (without the
// password of a Redis URL), the key's id, and whether it answers.
func TestCheckShowsTheStateStore(t *testing.T) {
	t.Parallel()
	redis := testkit.StartRedis(t, testkit.RedisOptions{})
	dir := t.TempDir()
	key := writeStateKey(t, dir)
	for _, c := range []struct {
		url, want, also string
		exit            int // a store that does not answer fails check
	}{
		{strings.Replace(redis.URL(), "redis://", "redis://:hunter2-pw@", 1), "state: redis redis://:xxxxx@" + redis.Addr() + "/0, tokens sealed under key ", ", answering; onUnavailable refuse", 0},
		{fmt.Sprintf("redis://:hunter2-pw@127.0.0.1:%d/0", freePort(t)), "state: redis redis://:xxxxx@127.0.0.1:", ", NOT answering: the state store (redis, trunk.state) is unavailable", 1},
	} {
		cfg := writeConfig(t, map[string]server{"weather": weatherServer()}, map[string]any{"state": map[string]any{"url": c.url, "keyFile": key}})
		out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
		if code != c.exit {
			t.Fatalf("check: exit %d, want %d\n%s\n%s", code, c.exit, out, errOut)
		}
		if !strings.Contains(out, c.want) || !strings.Contains(out, c.also) || strings.Contains(out+errOut, "hunter2") {
			t.Errorf("check's output lacks %q and %q, or shows the password:\n%s\n%s", c.want, c.also, out, errOut)
		}
	}
}

// Without a path, the embedded store is state.db in the user's state
// directory, beside the oauth token directory; a key file others may read
// is warned of.
func TestEmbeddedStoreDefaultsToTheStateDirectory(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	key := writeStateKey(t, t.TempDir())
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]server{"weather": weatherServer()}, map[string]any{"state": map[string]any{"keyFile": key}})
	out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	want := "state: embedded " + filepath.Join(state, "mcptrunk", "state.db") + ", tokens sealed under key "
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, ", answering;") {
		t.Errorf("check: exit %d, output lacks %q:\n%s\n%s", code, want, out, errOut)
	}
	if runtime.GOOS != "windows" && !strings.Contains(out, key+" is readable by others than its owner: chmod 600 it") {
		t.Errorf("a key file others may read: check does not say so:\n%s", out)
	}
	if fi, err := os.Stat(filepath.Join(state, "mcptrunk", "state.db")); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("the store's file: %v, %v; want it made 0600", fi, err)
	}
}

// A second stdio trunk on a config whose embedded store another holds
// serves its host with its state in memory, saying so; a second
// serve --http, whose callers' sign-ins would silently not be kept, does
// not start, naming the file.
func TestSecondTrunkOnTheEmbeddedStore(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	cfg := writeConfig(t, map[string]server{"weather": weatherServer()}, map[string]any{"state": map[string]any{"path": db, "keyFile": writeStateKey(t, dir)}})
	first := startRawTrunk(t, ctx, cfg)
	first.initialize(ctx)
	second := startRawTrunk(t, ctx, cfg)
	second.initialize(ctx)
	if !strings.Contains(second.stderr.String(), "the state store is in use by another mcptrunk; this stdio trunk keeps its state in memory") {
		t.Errorf("the second stdio trunk did not say its state is in memory:\n%s", tail(second.stderr.String(), 2000))
	}
	_, stderr, code := runCLI(t, 30*time.Second, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "trunk.state.path: "+db+" is open in another process") {
		t.Errorf("a serve --http on the held store: exit %d, stderr:\n%s", code, stderr)
	}
}
