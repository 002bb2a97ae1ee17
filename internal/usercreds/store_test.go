package usercreds

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// flaky is a backend whose answers a test turns off and on.
type flaky struct {
	*statestore.Memory
	down bool
}

func (f *flaky) Get(ctx context.Context, n string) ([]byte, error) {
	if f.down {
		return nil, errors.New("connection refused")
	}
	return f.Memory.Get(ctx, n)
}

func (f *flaky) Put(ctx context.Context, n string, r []byte, e time.Time) error {
	if f.down {
		return errors.New("connection refused")
	}
	return f.Memory.Put(ctx, n, r, e)
}

// TestExchangedTokensShared: a token exchanged by one broker is used by
// another over the same store (another replica, or the trunk after a
// restart) without a second exchange; with the store down, calls still
// get tokens, exchanged afresh.
func TestExchangedTokensShared(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	clk := testkit.NewClock(time.Now())
	back := &flaky{Memory: statestore.NewMemory(clk.Now)}
	keys, _ := statestore.NewKeys(bytes.Repeat([]byte{3}, statestore.KeySize), nil)
	store := statestore.New(back, keys, statestore.Options{Now: clk.Now})
	specs := []config.Spec{exchangeSpec(iss, "gh", "https://gh.example.com")}
	a, b := New(Options{Now: clk.Now, Store: store}), New(Options{Now: clk.Now, Store: store})
	a.Configure(specs)
	b.Configure(specs)
	in := iss.Token(t, "alice", trunkAud, nil)
	ctx := context.Background()
	first, err := a.Authorization(ctx, "alice", "gh", "", func() string { return in })
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Authorization(ctx, "alice", "gh", "", func() string { return in })
	if err != nil || second != first || len(iss.Issued()) != 1 {
		t.Errorf("the other broker: same token %v, %v, %d minted; want the stored one, one exchange", second == first, err, len(iss.Issued()))
	}

	back.down = true
	_ = store.Health(ctx) // the store's watch notices
	if v, err := b.Authorization(ctx, "alice", "gh", "", func() string { return in }); err != nil || v == "" {
		t.Errorf("with the store down: %v; want a token exchanged afresh", err)
	}
	back.down = false
	if err := store.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Authorization(ctx, "alice", "gh", "", func() string { return in }); err != nil || v != first {
		t.Errorf("with the store back: the stored token %v, %v", v == first, err)
	}
}

func (f *flaky) Ping(context.Context) error {
	if f.down {
		return errors.New("connection refused")
	}
	return nil
}

// slowDeletes is a store whose deletes answer only when their caller
// gives up: Redis hanging.
type slowDeletes struct {
	*statestore.Memory
	started, ended chan struct{}
}

func (s *slowDeletes) Delete(ctx context.Context, _ string) error {
	s.started <- struct{}{}
	<-ctx.Done()
	close(s.ended)
	return ctx.Err()
}

// TestForgetDeletesOnlyItsOwnInTheBackground: Forget deletes the tokens
// this process stored, not those another replica stored for the same
// subject, and does not wait for the store; Close ends what it started.
func TestForgetDeletesOnlyItsOwnInTheBackground(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	keys, _ := statestore.NewKeys(bytes.Repeat([]byte{3}, statestore.KeySize), nil)
	store := statestore.New(statestore.NewMemory(nil), keys, statestore.Options{})
	specs := []config.Spec{exchangeSpec(iss, "gh", "https://gh.example.com")}
	a, b := New(Options{Store: store}), New(Options{Store: store})
	defer a.Close()
	a.Configure(specs)
	b.Configure(specs)
	in := iss.Token(t, "alice", trunkAud, nil)
	ctx := context.Background()
	first, err := a.Authorization(ctx, "alice", "gh", "", func() string { return in })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authorization(ctx, "alice", "gh", "", func() string { return in }); err != nil {
		t.Fatal(err)
	}
	b.Forget("alice") // b read a's token; it stored none
	b.Close()
	if v, err := a.Authorization(ctx, "alice", "gh", "", func() string { return in }); err != nil || v != first || len(iss.Issued()) != 1 {
		t.Errorf("after the other replica forgot alice: same token %v, %v, %d minted; want a's kept", v == first, err, len(iss.Issued()))
	}

	slow := &slowDeletes{Memory: statestore.NewMemory(nil), started: make(chan struct{}, 1), ended: make(chan struct{})}
	c := New(Options{Store: statestore.New(slow, keys, statestore.Options{})})
	c.Configure(specs)
	if _, err := c.Authorization(ctx, "alice", "gh", "", func() string { return in }); err != nil {
		t.Fatal(err)
	}
	c.Forget("alice")
	<-slow.started // it deletes what it stored
	select {
	case <-slow.ended:
		t.Error("Forget waited for the store's delete")
	default:
	}
	c.Close()
	select {
	case <-slow.ended:
	default:
		t.Error("Close returned with a delete still running")
	}
}

// TestHeldPrunedAndNamesWithoutTheSecret: the tokens this process stored
// are forgotten once past their end (held grows with the subjects holding
// tokens, not every one seen); the store's names do not depend on the
// client secret, which whatever else reads the Redis could guess from a
// fast digest; a reload changing only the secret keeps the tokens.
func TestHeldPrunedAndNamesWithoutTheSecret(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	clk := testkit.NewClock(time.Now())
	b := New(Options{Now: clk.Now})
	spec := exchangeSpec(iss, "gh", "https://gh.example.com")
	b.Configure([]config.Spec{spec})
	ctx := context.Background()
	for _, sub := range []string{"alice", "bob"} {
		in := iss.Token(t, sub, trunkAud, nil)
		if _, err := b.Authorization(ctx, sub, "gh", "", func() string { return in }); err != nil {
			t.Fatal(err)
		}
		clk.Add(2 * time.Hour) // past the token's hour
	}
	b.mu.Lock()
	_, alice := b.held["alice"]
	n := len(b.held)
	b.mu.Unlock()
	if alice || n != 1 {
		t.Errorf("held after alice's token ended: %d subjects (alice %v), want bob's only", n, alice)
	}

	other := spec
	other.Credentials.ClientSecret = "another-secret"
	if entryOf(other) != entryOf(spec) {
		t.Error("the store's names depend on the client secret")
	}
	clk.Add(-2 * time.Hour) // bob's token usable again
	b.Configure([]config.Spec{other})
	if b.Holding() != 1 {
		t.Errorf("after a reload changing only the secret: %d subjects hold tokens, want bob's kept", b.Holding())
	}
}
