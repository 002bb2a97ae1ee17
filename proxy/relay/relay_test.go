package relay

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

// Each session's token is replaced with one of the trunk's, mapped back to
// the session and its own token, and forgotten at release or with the
// session.
func TestProgress(t *testing.T) {
	var p Progress[string]
	params := json.RawMessage(`{"name":"x","_meta":{"progressToken":7}}`)
	outA, releaseA := p.Claim("a", params)
	outB, _ := p.Claim("b", params)
	tokA, tokB := metaToken(outA), metaToken(outB)
	if tokA == nil || string(tokA) == string(tokB) || string(tokA) == "7" {
		t.Fatalf("tokens %s and %s: want two of the trunk's own", tokA, tokB)
	}
	s, back, ok := p.Owner(json.RawMessage(`{"progressToken":` + string(tokB) + `,"progress":1}`))
	if !ok || s != "b" || string(back) != `{"progressToken":7,"progress":1}` {
		t.Errorf("Owner = %q %s %v, want b with its own token", s, back, ok)
	}
	releaseA()
	if _, _, ok := p.Owner(json.RawMessage(`{"progressToken":` + string(tokA) + `}`)); ok {
		t.Error("a released token still has an owner")
	}
	p.Forget("b")
	if _, _, ok := p.Owner(json.RawMessage(`{"progressToken":` + string(tokB) + `}`)); ok {
		t.Error("a forgotten session's token still has an owner")
	}
	plain := json.RawMessage(`{"name":"x"}`)
	if out, _ := p.Claim("a", plain); string(out) != string(plain) {
		t.Errorf("params without a token came back as %s", out)
	}
}

// metaToken is the progress token of params' _meta.
func metaToken(params json.RawMessage) json.RawMessage {
	var m struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &m)
	return m.Meta.Token
}

// A token is live while a request holds it and its context lasts: two
// requests with the same token keep it live until both end, and a token's
// spacing does not matter.
func TestLive(t *testing.T) {
	var l Live
	note := json.RawMessage(`{"progressToken": "t" ,"progress":1}`)
	if l.Has(note) {
		t.Fatal("a token no request holds is live")
	}
	if release := l.Hold(context.Background(), json.RawMessage(`{"name":"x"}`)); l.Has(note) {
		t.Fatal("a request without a token made one live")
	} else {
		release()
	}
	ctx, cancel := context.WithCancel(context.Background())
	params := json.RawMessage(`{"_meta":{"progressToken":"t"}}`)
	releaseA := l.Hold(ctx, params)
	releaseB := l.Hold(context.Background(), params)
	releaseA()
	if !l.Has(note) {
		t.Fatal("the token ended with one of the two requests holding it")
	}
	releaseB()
	if l.Has(note) {
		t.Fatal("the token outlived both requests")
	}
	releaseC := l.Hold(ctx, params)
	defer releaseC()
	if !l.Has(note) {
		t.Fatal("a held token is not live")
	}
	cancel()
	if l.Has(note) {
		t.Fatal("the token outlived its request's cancel")
	}
}

func TestInFlight(t *testing.T) {
	var f InFlight[string]
	endA := f.Began("a", "x")
	endB := f.Began("b", "x")
	if got := f.On("x"); !slices.Equal(got, []string{"a", "b"}) || !f.busy("b", "x") || f.busy("b", "y") {
		t.Errorf("On(x) = %v", got)
	}
	endA()
	endB()
	if f.Servers() != 0 || f.busy("a", "x") {
		t.Errorf("calls left on %d servers", f.Servers())
	}
}

// A connection is told the level and the subscriptions once; a new
// connection (a restart) is told again; an ended subscription is not.
func TestResync(t *testing.T) {
	r := NewResync()
	first, second := time.Unix(1, 0), time.Unix(2, 0)
	conn := Conn{Server: "s", Since: first, Ready: true, Logging: true}
	if _, _, ok := r.Due(conn); ok {
		t.Fatal("something due before anything was asked")
	}
	r.SetLevel(json.RawMessage(`{"level":"debug"}`))
	r.Subscribed("s", "file:///a", true, first) // the host's request reached this connection
	r.Subscribed("s", "file:///b", true, first)
	r.Subscribed("s", "file:///b", false, first)
	level, uris, ok := r.Due(conn)
	if !ok || string(level) != `{"level":"debug"}` || len(uris) != 0 {
		t.Fatalf("Due = %s %v %v, want only the level (the subscription went to this connection)", level, uris, ok)
	}
	if r.ClaimLevel(conn) {
		t.Error("the level claimed twice on one connection")
	}
	again := Conn{Server: "s", Since: second, Ready: true, Logging: true}
	level, uris, ok = r.Due(again)
	if !ok || level == nil || !slices.Equal(uris, []string{"file:///a"}) {
		t.Errorf("after a restart Due = %s %v %v, want the level and file:///a", level, uris, ok)
	}
	if _, _, ok := r.Due(Conn{Server: "s", Since: time.Unix(3, 0)}); ok {
		t.Error("something due to a server that is not ready")
	}
}

func TestShares(t *testing.T) {
	var fresh Shares
	fresh.Release("u", func() {}) // nothing held: no panic, the thing given up as before
	var s Shares
	var took, gave int
	take := func() error { took++; return nil }
	give := func() { gave++ }
	if err := s.Acquire("u", func() error { return errors.New("refused") }); err == nil {
		t.Fatal("a refused subscription took a share")
	}
	_ = s.Acquire("u", take)
	_ = s.Acquire("u", take)
	s.Release("u", give)
	if took != 1 || gave != 0 {
		t.Errorf("took %d, gave %d: want one subscription held for the second share", took, gave)
	}
	s.Release("u", give)
	_ = s.Acquire("u", take)
	if gave != 1 || took != 2 {
		t.Errorf("took %d, gave %d: want it given up with the last share and taken again", took, gave)
	}
}
