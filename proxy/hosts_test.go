package proxy

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// bareTrunk is a Trunk with no servers and no rules, enough for its
// sessions' routing to be tested without starting it.
func bareTrunk() *Trunk {
	tr := &Trunk{hosts: newHostSet(), logger: slog.New(slog.DiscardHandler)}
	tr.state.Store(newState(tr, &config.Config{}, nil))
	return tr
}

// session2025 is a 2025-era session that declared caps, of a caller
// without identity.
func session2025(t *Trunk, caps ...string) *Session {
	s := &Session{trunk: t}
	s.SetClaims(nil)
	hr := hostRequest{HostRequest: translate.HostRequest{Version: "2025-11-25", Caps: map[string]json.RawMessage{}}, session: s}
	for _, c := range caps {
		hr.Caps[c] = json.RawMessage(`{}`)
	}
	s.init2025.Store(&hr)
	return s
}

// What a 2025 server sends on its own concerns, in shared mode, the one
// session with calls in flight on it: none with no call or with calls of
// two sessions (the trunk cannot tell), whatever their order or number of
// calls; the call is named when that session has one in flight there. A
// request naming a session's task is that session's. With sharing off it
// is the one host.
func TestHostSetConcerned(t *testing.T) {
	tr := bareTrunk()
	a, b := session2025(tr), session2025(tr, "sampling")
	tr.hosts.add(a)
	if got, _, _ := tr.hosts.concerned("x", nil, nil); got != a {
		t.Errorf("sharing off, one host: %p, want it", got)
	}
	tr.hosts.shared.Store(true)
	if got, _, busy := tr.hosts.concerned("x", nil, nil); got != nil || busy != 0 {
		t.Errorf("shared, one session, no call: %p (%d busy), want none", got, busy)
	}
	tr.hosts.add(b)
	endA := tr.hosts.began(a, "x", json.RawMessage(`1`))
	if got, call, busy := tr.hosts.concerned("x", nil, nil); got != a || call != "1" || busy != 1 {
		t.Errorf("one call of a: %p call %q (%d busy), want a's call 1", got, call, busy)
	}
	endA2 := tr.hosts.began(a, "x", json.RawMessage(`"two"`))
	if got, call, _ := tr.hosts.concerned("x", nil, nil); got != a || call != "" {
		t.Errorf("two calls of a: %p call %q, want a and no one call", got, call)
	}
	endB := tr.hosts.began(b, "x", json.RawMessage(` 7 `))
	if got, _, busy := tr.hosts.concerned("x", nil, nil); got != nil || busy != 2 {
		t.Errorf("calls of a and b: %p (%d busy), want none of 2", got, busy)
	}
	if got, call, _ := tr.hosts.concerned("x", nil, func(s *Session) bool { return s == b }); got != b || call != "7" {
		t.Errorf("calls of a and b, only b mine: %p call %q, want b's call 7", got, call)
	}
	tr.hosts.tasks.Own("x", "t-1", b)
	if got, _, _ := tr.hosts.concerned("x", json.RawMessage(`{"_meta":{"`+translate.RelatedTaskKey+`":{"taskId":"t-1"}}}`), nil); got != b {
		t.Errorf("calls of a and b, a request of b's task: %p, want b", got)
	}
	if got, _, busy := tr.hosts.concerned("y", nil, nil); got != nil || busy != 0 {
		t.Errorf("a call on x says nothing of y: %p", got)
	}
	endA()
	if got, _, _ := tr.hosts.concerned("x", nil, nil); got != nil {
		t.Errorf("a's second call still in flight, and b's: %p, want none", got)
	}
	endA2()
	if got, _, _ := tr.hosts.concerned("x", nil, nil); got != b {
		t.Errorf("after a's calls ended: %p, want b", got)
	}
	endB()
	if n := tr.hosts.calls.Servers(); n != 0 {
		t.Errorf("calls left on %d servers", n)
	}
}

// What a session is sent for one of its host's calls reaches a downstream
// that routes by it (RelatedStreams) with the call's id as its label, the
// message untouched; any other session's downstream gets no label.
func TestSessionLabelsWhatBelongsToACall(t *testing.T) {
	tr := bareTrunk()
	for _, related := range []bool{true, false} {
		out := make(testkit.LabelSink, 2)
		s := tr.Attach(nil, out, &SessionOptions{ID: "s", RelatedStreams: related})
		if err := s.notifyFor(`"a"`, "notifications/message", json.RawMessage(`{"level":"info","_meta":{"k":1}}`)); err != nil {
			t.Fatal(err)
		}
		want := [2]string{`"a"`, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","_meta":{"k":1}}}`}
		if !related {
			want[0] = "-"
		}
		if got := <-out; got != want {
			t.Errorf("related streams %v: wrote %q, want %q", related, got, want)
		}
		_ = s.conn.Close() // a bare trunk has no more for Session.Close to detach from
		s.out.Close()
	}
}

// In shared mode a request's progress token is replaced with one of the
// trunk's, mapped back to the session and its own token, and forgotten at
// release; with sharing off, params are untouched.
func TestHostSetProgress(t *testing.T) {
	tr := bareTrunk()
	a, b := session2025(tr), session2025(tr)
	params := json.RawMessage(`{"name":"x","_meta":{"progressToken":"same"}}`)
	if out, _ := tr.hosts.claimProgress(t.Context(), a, params); string(out) != string(params) {
		t.Errorf("sharing off: %s", out)
	}
	tr.hosts.shared.Store(true)
	outA, releaseA := tr.hosts.claimProgress(t.Context(), a, params)
	outB, releaseB := tr.hosts.claimProgress(t.Context(), b, params)
	tokA, tokB := rawjson.MetaValue(outA, "progressToken"), rawjson.MetaValue(outB, "progressToken")
	if string(tokA) == `"same"` || string(tokA) == string(tokB) {
		t.Fatalf("tokens %s and %s: want two of the trunk's own", tokA, tokB)
	}
	note := json.RawMessage(`{"progressToken":` + string(tokB) + `,"progress":1}`)
	s, back, ok := tr.hosts.progress.Owner(note)
	if !ok || s != b || string(back) != `{"progressToken":"same","progress":1}` {
		t.Errorf("progressOwner: %p %s %v, want b with its own token", s, back, ok)
	}
	releaseB()
	if _, _, ok := tr.hosts.progress.Owner(note); ok {
		t.Error("a released token still routes")
	}
	tr.hosts.add(a)
	tr.hosts.remove(a) // forgets a's routes too
	if _, _, ok := tr.hosts.progress.Owner(json.RawMessage(`{"progressToken":` + string(tokA) + `}`)); ok {
		t.Error("a removed session's token still routes")
	}
	releaseA()
}

// A session gets the log messages at or above its level; one that named
// none gets all; a stateless request's only those of servers it has a call
// on, at the level it named.
func TestWantsLog(t *testing.T) {
	tr := bareTrunk()
	tr.hosts.shared.Store(true)
	s := session2025(tr)
	if !s.wantsLog("x", "debug") {
		t.Error("no level: want every message")
	}
	s.level = "warning"
	if s.wantsLog("x", "info") || !s.wantsLog("x", "error") || !s.wantsLog("x", "surprising") {
		t.Error("at warning: want error and unknown levels, not info")
	}
	r := &Session{trunk: tr, perRequest: true}
	r.SetClaims(nil)
	if r.wantsLog("x", "error") {
		t.Error("a stateless request that named no level got a message")
	}
	r.level = "debug"
	if r.wantsLog("x", "error") {
		t.Error("a stateless request got a message of a server it has no call on")
	}
	end := tr.hosts.began(r, "x", nil)
	defer end()
	if !r.wantsLog("x", "info") {
		t.Error("a stateless request at debug missed its server's message")
	}
}
