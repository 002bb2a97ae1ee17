package signin

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
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
	tok, err := a.m.Authorization(context.Background(), "alice", "who")
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
	if got, err := b.m.Authorization(context.Background(), "alice", "who"); err != nil || got != tok {
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
	tok, err := b.m.Authorization(ctx, "alice", "who")
	if err != nil {
		t.Fatalf("the other replica: %v; want alice's sign-in", err)
	}
	if sub, _ := subjectOf(t, tok); sub != "alice" {
		t.Errorf("the other replica's token is %s's", sub)
	}
	if b.m.Holding() != 0 || a.m.Holding() != 1 {
		t.Errorf("holding: a %d, b %d; want what each process stored", a.m.Holding(), b.m.Holding())
	}

	first.clk.Add(time.Hour - 10*time.Second)
	refreshed, err := a.m.Authorization(ctx, "alice", "who")
	if err != nil || refreshed == tok {
		t.Fatalf("near expiry a: changed %v, %v", refreshed != tok, err)
	}
	// b reads a's refreshed grant (the issuer's clock is not the test's,
	// so b may refresh it in turn, with the refresh token a got).
	if got, err := b.m.Authorization(ctx, "alice", "who"); err != nil || got == tok {
		t.Errorf("b after a refreshed: still the first token %v, %v; want a's grant", got == tok, err)
	}

	first.iss.RevokeRefresh("alice")
	first.clk.Add(time.Hour)
	if _, err := b.m.Authorization(ctx, "alice", "who"); !errors.As(err, new(*NeedSignInError)) {
		t.Fatalf("after the revocation b: %v; want NeedSignInError", err)
	}
	if _, err := a.m.Authorization(ctx, "alice", "who"); !errors.As(err, new(*NeedSignInError)) {
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
}
