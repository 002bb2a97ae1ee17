package signin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// signIn signs sub in through r, as its browser would.
func (r *rig) signIn(t *testing.T, sub string) {
	t.Helper()
	if status, page := testissuer.Visit(t, r.iss.Browser(t, sub), r.elicit(t, sub)); status != http.StatusOK || !strings.Contains(page, "Signed in to who") {
		t.Fatalf("%s's sign-in: %d %s", sub, status, page)
	}
}

func embeddedStore(t *testing.T, path string, clk *testkit.Clock) *statestore.Store {
	t.Helper()
	keyFile := filepath.Join(filepath.Dir(path), "state.key")
	if _, err := os.Stat(keyFile); err != nil {
		if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", statestore.KeySize)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := statestore.Open(config.State{Configured: true, Path: path, KeyFile: keyFile}, "", statestore.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSignInOutlivesARestart: a sign-in kept in the embedded store is
// found by the next Manager over the same file, without asking again,
// and the file holds neither its access nor its refresh token in the
// clear.
func TestSignInOutlivesARestart(t *testing.T) {
	first := newRig(t)
	path := filepath.Join(t.TempDir(), "state.db")
	store := embeddedStore(t, path, first.clk)
	a := first.replica(t, store)
	a.signIn(t, "alice")
	tok, err := a.m.Authorization(context.Background(), "alice", "who", "")
	if err != nil {
		t.Fatal(err)
	}
	store.Close()

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bearer := strings.TrimPrefix(tok, "Bearer ")
	if bytes.Contains(raw, []byte(bearer)) || bytes.Contains(raw, []byte(bearer[len(bearer)-20:])) {
		t.Error("the store's file holds the access token in the clear")
	}
	if bytes.Contains(raw, []byte("alice")) {
		t.Error("the store's file names the subject")
	}

	store = embeddedStore(t, path, first.clk)
	defer store.Close()
	b := first.replica(t, store)
	if err := b.m.Require(context.Background(), Caller{Subject: "alice"}, "who"); err != nil {
		t.Fatalf("after the restart, Require: %v; want alice still signed in", err)
	}
	if got, err := b.m.Authorization(context.Background(), "alice", "who", ""); err != nil || got != tok {
		t.Errorf("after the restart: same token %v, %v", got == tok, err)
	}
}

// TestSignInSharedByReplicas: two Managers over one store: a sign-in
// through one serves the other; a refresh by one is what the other uses
// too; a revocation seen by one makes both
// ask again.
func TestSignInSharedByReplicas(t *testing.T) {
	first := newRig(t)
	shared := statestore.New(statestore.NewMemory(first.clk.Now), nil, statestore.Options{Now: first.clk.Now})
	a, b := first.replica(t, shared), first.replica(t, shared)
	ctx := context.Background()
	a.signIn(t, "alice")
	tok, err := b.m.Authorization(ctx, "alice", "who", "")
	if err != nil {
		t.Fatalf("the other replica: %v; want alice's sign-in", err)
	}
	if sub, _ := subjectOf(t, tok); sub != "alice" {
		t.Errorf("the other replica's token is %s's", sub)
	}
	if b.m.holding() != 0 || a.m.holding() != 1 {
		t.Errorf("holding: a %d, b %d; want what each process stored", a.m.holding(), b.m.holding())
	}

	first.clk.Add(time.Hour - 10*time.Second)
	refreshed, err := a.m.Authorization(ctx, "alice", "who", "")
	if err != nil || refreshed == tok {
		t.Fatalf("near expiry a: changed %v, %v", refreshed != tok, err)
	}
	// b reads a's refreshed grant (the issuer's clock is not the test's,
	// so b may refresh it in turn, with the refresh token a got).
	if got, err := b.m.Authorization(ctx, "alice", "who", ""); err != nil || got == tok {
		t.Errorf("b after a refreshed: still the first token %v, %v; want a's grant", got == tok, err)
	}

	first.iss.RevokeRefresh("alice")
	first.clk.Add(time.Hour)
	if _, err := b.m.Authorization(ctx, "alice", "who", ""); !errors.As(err, new(*NeedSignInError)) {
		t.Fatalf("after the revocation b: %v; want NeedSignInError", err)
	}
	if _, err := a.m.Authorization(ctx, "alice", "who", ""); !errors.As(err, new(*NeedSignInError)) {
		t.Errorf("after b dropped the revoked sign-in, a: %v; want NeedSignInError", err)
	}
}

// downBackend is a store that does not answer.
type downBackend struct{ *statestore.Memory }

func (*downBackend) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}
func (*downBackend) Kind() string { return "redis" }

// TestStoreDownIsNotASignIn: a caller whose sign-in cannot be read is
// told the store is unavailable, not asked to sign in again.
func TestStoreDownIsNotASignIn(t *testing.T) {
	first := newRig(t)
	keys, _ := statestore.NewKeys(bytes.Repeat([]byte{7}, statestore.KeySize), nil)
	r := first.replica(t, statestore.New(&downBackend{statestore.NewMemory(nil)}, keys, statestore.Options{}))
	err := r.m.Require(context.Background(), Caller{Subject: "alice"}, "who")
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code == CodeURLElicitationRequired || !strings.Contains(e.Message, "the state store (redis, trunk.state) is unavailable") {
		t.Errorf("Require with the store down: %v; want an error naming the store, no sign-in", err)
	}
	if err != nil && strings.Contains(err.Error(), "127.0.0.1:6379") {
		t.Errorf("the host is told where the store is: %v", err)
	}
	if !strings.Contains(r.log.String(), "connection refused") {
		t.Errorf("the log does not say why the store is unavailable:\n%s", r.log.String())
	}
}

// balanced is two Managers (replicas) over one store behind one origin,
// as a balancer serves them: which one answers each path is the test's
// choice (route).
type balanced struct {
	a, b  *rig
	base  string // the origin both are served at
	route func(path string) *Manager
}

func newBalanced(t *testing.T) *balanced {
	t.Helper()
	first := newRig(t)
	shared := statestore.New(statestore.NewMemory(first.clk.Now), nil, statestore.Options{Now: first.clk.Now})
	lb := &balanced{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { lb.route(r.URL.Path).ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	lb.base = hs.URL
	cfg, err := config.Parse(strings.NewReader(`{"trunk": {"http": {"auth": {"issuer": "`+first.iss.URL+`", "resource": "`+hs.URL+`/mcp"}}},
		"mcpServers": {"who": {"url": "`+first.who.URL+`", "credentials": {"mode": "oauth"}}}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []**rig{&lb.a, &lb.b} {
		*r = &rig{iss: first.iss, who: first.who, clk: first.clk, log: &testkit.Buffer{}}
		(*r).m = New(Options{Now: first.clk.Now, Store: shared})
		(*r).m.Configure(cfg)
	}
	return lb
}

// TestSignInCompletedByAnotherReplica: a sign-in started by one replica
// is completed wherever the balancer sends the browser's two requests:
// the link opened in the other replica, or the callback answered there;
// both replicas register one client. A callback replayed to the other
// replica finds nothing.
func TestSignInCompletedByAnotherReplica(t *testing.T) {
	lb := newBalanced(t)
	ctx := context.Background()
	for _, c := range []struct {
		sub               string
		connect, callback *Manager
	}{{"alice", lb.b.m, lb.a.m}, {"bob", lb.a.m, lb.b.m}, {"carol", lb.b.m, lb.b.m}} {
		browser := lb.a.iss.Browser(t, c.sub)
		lb.route = func(string) *Manager { return c.connect }
		link := lb.a.elicit(t, c.sub)
		cb := toCallback(t, browser, link)
		lb.route = func(string) *Manager { return c.callback }
		if status, page := testissuer.Visit(t, browser, cb); status != http.StatusOK || !strings.Contains(page, "Signed in to who") {
			t.Fatalf("%s's callback: %d %s", c.sub, status, page)
		}
		lb.route = func(string) *Manager { return otherOf(lb, c.callback) }
		if status, _ := testissuer.Visit(t, browser, cb); status != http.StatusBadRequest {
			t.Errorf("%s's callback replayed to the other replica: %d, want 400", c.sub, status)
		}
		for _, m := range []*Manager{lb.a.m, lb.b.m} {
			if tok, err := m.Authorization(ctx, c.sub, "who", ""); err != nil {
				t.Errorf("%s after signing in: %v", c.sub, err)
			} else if sub, _ := subjectOf(t, tok); sub != c.sub {
				t.Errorf("%s's token is %s's", c.sub, sub)
			}
		}
	}
	if n := lb.a.iss.Registered(lb.base + callbackPath); n != 1 {
		t.Errorf("the replicas registered %d clients, want 1 (the first one's, shared)", n)
	}
}

func otherOf(lb *balanced, m *Manager) *Manager {
	if m == lb.a.m {
		return lb.b.m
	}
	return lb.a.m
}

// TestWaitingCallSeesASignInCompletedElsewhere: a host that opens URLs
// waits in its call while the browser signs in through the other replica;
// the call goes on, and the host hears the elicitation complete.
func TestWaitingCallSeesASignInCompletedElsewhere(t *testing.T) {
	lb := newBalanced(t)
	lb.route = func(string) *Manager { return lb.b.m }
	browser := lb.a.iss.Browser(t, "dana")
	complete := make(chan string, 1)
	var visits sync.WaitGroup
	defer visits.Wait()
	c := Caller{Subject: "dana", Elicitation: json.RawMessage(`{"url":{}}`),
		Ask: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
			var p struct{ URL string }
			_ = json.Unmarshal(params, &p)
			visits.Go(func() {
				if status, page := testissuer.Visit(t, browser, p.URL); status != http.StatusOK {
					t.Errorf("dana's sign-in through b: %d %s", status, page)
				}
			})
			return json.RawMessage(`{"action":"accept"}`), nil
		},
		Notify: func(method string, params json.RawMessage) error {
			complete <- method
			return nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := lb.a.m.Require(ctx, c, "who"); err != nil {
		t.Fatalf("dana's call through a, signed in through b: %v", err)
	}
	select {
	case m := <-complete:
		if m != "notifications/elicitation/complete" {
			t.Errorf("the host was sent %s", m)
		}
	default:
		t.Error("the host was not told the elicitation completed")
	}
}

// flowsDown is a store whose shared sign-in flows cannot be read or
// deleted while down is set: Redis gone between a flow's start and its
// browser's requests.
type flowsDown struct {
	*statestore.Memory
	down atomic.Bool
}

func (f *flowsDown) failing(name string) bool {
	return f.down.Load() && strings.HasPrefix(name, "signin-flow/")
}

var errRefused = errors.New("dial tcp 127.0.0.1:6379: connection refused")

func (f *flowsDown) Get(ctx context.Context, name string) ([]byte, error) {
	if f.failing(name) {
		return nil, errRefused
	}
	return f.Memory.Get(ctx, name)
}

func (f *flowsDown) Delete(ctx context.Context, name string) error {
	if f.failing(name) {
		return errRefused
	}
	return f.Memory.Delete(ctx, name)
}

func (f *flowsDown) Take(ctx context.Context, name string) ([]byte, error) {
	if f.failing(name) {
		return nil, errRefused
	}
	return f.Memory.Take(ctx, name)
}

// TestStoreDownIsNotTakenElsewhere: a store that cannot be read when the
// browser arrives is not a flow opened or taken by another replica: the
// replica that started the flow completes it from what it holds; another
// replica says the store is unavailable rather than that the link is
// unknown.
func TestStoreDownIsNotTakenElsewhere(t *testing.T) {
	first := newRig(t)
	back := &flowsDown{Memory: statestore.NewMemory(first.clk.Now)}
	keys, _ := statestore.NewKeys(bytes.Repeat([]byte{7}, statestore.KeySize), nil)
	store := statestore.New(back, keys, statestore.Options{Now: first.clk.Now})
	a, b := first.replica(t, store), first.replica(t, store)

	link := a.elicit(t, "alice")
	back.down.Store(true)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	b.m.ServeHTTP(w, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "state store is unavailable") {
		t.Errorf("another replica's link with the store down: %d %s; want 503 naming the store", w.Code, w.Body.String())
	}
	if status, page := testissuer.Visit(t, a.iss.Browser(t, "alice"), link); status != http.StatusOK || !strings.Contains(page, "Signed in to who") {
		t.Fatalf("the starting replica with the store down: %d %s; want signed in from its own flow", status, page)
	}
	back.down.Store(false)
	if _, err := a.m.Authorization(context.Background(), "alice", "who", ""); err != nil {
		t.Errorf("after signing in with the flows unreadable: %v", err)
	}
}

// TestHeldPrunedAndNamesWithoutTheSecret: the grants this process stored
// are forgotten once past their end; the store's names do not depend on
// the client secret, and a reload changing only the secret keeps the
// sign-ins.
func TestHeldPrunedAndNamesWithoutTheSecret(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for _, sub := range []string{"alice", "bob"} {
		g := &oauth.Grant{}
		rec, _ := json.Marshal(map[string]any{"accessToken": "at-" + sub, "expiry": r.clk.Now().Add(time.Hour)})
		if err := g.UnmarshalBinary(rec); err != nil {
			t.Fatal(err)
		}
		if err := r.m.store(ctx, sub, "who", g); err != nil {
			t.Fatal(err)
		}
		r.clk.Add(2 * time.Hour) // past the grant's end: it has no refresh token
	}
	r.m.mu.Lock()
	_, alice := r.m.held["alice"]
	n := len(r.m.held)
	spec := r.m.servers["who"].spec
	r.m.mu.Unlock()
	if alice || n != 1 {
		t.Errorf("held after alice's grant ended: %d subjects (alice %v), want bob's only", n, alice)
	}
	other := spec
	other.Credentials.ClientSecret = "another-secret"
	if entryOf(other) != entryOf(spec) {
		t.Error("the store's names depend on the client secret")
	}
}

// TestPlantedGrantIsNotUsed: a grant written in the clear to the shared
// store (by anyone who can write to the Redis, names being computable)
// is not used for the subject's calls, nor its token endpoint refreshed
// at; the caller is asked to sign in instead.
func TestPlantedGrantIsNotUsed(t *testing.T) {
	first := newRig(t)
	back := statestore.NewMemory(first.clk.Now)
	keys, _ := statestore.NewKeys(bytes.Repeat([]byte{7}, statestore.KeySize), nil)
	r := first.replica(t, statestore.New(back, keys, statestore.Options{Now: first.clk.Now}))
	r.m.mu.Lock()
	name := grantName("who", r.m.servers["who"].entry, "alice")
	r.m.mu.Unlock()
	planted, _ := json.Marshal(map[string]any{"accessToken": "planted", "refreshToken": "r", "tokenEndpoint": "http://127.0.0.1:1/steal",
		"expiry": first.clk.Now().Add(time.Hour)})
	planter := statestore.New(back, nil, statestore.Options{Now: first.clk.Now})
	if err := planter.Put(context.Background(), name, planted, statestore.Put{Expires: first.clk.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if v, err := r.m.Authorization(context.Background(), "alice", "who", ""); err == nil || strings.Contains(v, "planted") {
		t.Errorf("with a planted grant: %q, %v; want it refused", v, err)
	}
	if err := r.m.Require(context.Background(), Caller{Subject: "alice"}, "who"); !strings.Contains(fmt.Sprint(err), "needs you to sign in") {
		t.Errorf("Require with a planted grant: %v; want a sign-in asked for", err)
	}
}

// hangUp is a store that answers a done context with its error, as Redis
// does, and runs hook after the next Get.
type hangUp struct {
	*statestore.Memory
	hook func()
}

func (h *hangUp) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec, err := h.Memory.Get(ctx, name)
	if f := h.hook; f != nil {
		h.hook = nil
		f()
	}
	return rec, err
}

// TestRefreshNotOnTheFirstCallersContext: the refresh every concurrent
// caller waits for does not run on the context of the caller that
// started it: that caller hanging up fails none of them.
func TestRefreshNotOnTheFirstCallersContext(t *testing.T) {
	first := newRig(t)
	back := &hangUp{Memory: statestore.NewMemory(first.clk.Now)}
	keys, _ := statestore.NewKeys(bytes.Repeat([]byte{7}, statestore.KeySize), nil)
	r := first.replica(t, statestore.New(back, keys, statestore.Options{Now: first.clk.Now}))
	r.signIn(t, "alice")
	tok, err := r.m.Authorization(context.Background(), "alice", "who", "")
	if err != nil {
		t.Fatal(err)
	}
	first.clk.Add(time.Hour - 10*time.Second) // near expiry: a refresh is due
	ctx, cancel := context.WithCancel(context.Background())
	back.hook = cancel // the caller hangs up once its grant is read
	got, err := r.m.Authorization(ctx, "alice", "who", "")
	if err != nil || got == tok {
		t.Errorf("a refresh whose first caller hung up: changed %v, %v; want it refreshed", got != tok, err)
	}
}
