package httpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Sessions whose host sent nothing after initialize expire after
// HandshakeIdle, so that bare initialize requests cannot keep the table
// full; a session in use keeps SessionIdle.
func TestBareInitializeExpiresSoon(t *testing.T) {
	th := newTestHandler(t, Options{MaxSessions: 4, LoopbackOnly: true, HandshakeIdle: 200 * time.Millisecond}, nil)
	used := th.initialize()
	if status, body := th.call(used, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); status != http.StatusOK {
		t.Fatalf("tools/list: HTTP %d %s", status, body)
	}
	for range 3 {
		th.initialize()
	}
	waitFor(t, "the bare sessions to expire", func() bool { return th.sessionCount() == 1 })
	if th.session(used) == nil {
		t.Error("the session in use expired with the bare ones")
	}
	th.initialize()
}

// finish sends a session's notifications/initialized: its handshake is done.
func (th *testHandler) finish(session string) {
	th.t.Helper()
	if status, body := th.call(session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		th.t.Fatalf("notifications/initialized: HTTP %d %s", status, body)
	}
}

// A full table makes room for a new host by evicting the least recently
// used session that never finished its handshake: any number of bare
// initializes leave hosts a way in, and never cost a host that finished
// its handshake (or used its session) its place. A table full of those
// refuses with the limit.
func TestBareInitializesMakeRoom(t *testing.T) {
	th := newTestHandler(t, Options{MaxSessions: 4, LoopbackOnly: true}, nil)
	finished := th.initialize()
	th.finish(finished)
	used := th.initialize()
	if status, body := th.call(used, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); status != http.StatusOK {
		t.Fatalf("tools/list: HTTP %d %s", status, body)
	}
	first := th.initialize()
	for range 70 {
		th.initialize() // fails the test unless admitted
	}
	if th.session(finished) == nil || th.session(used) == nil {
		t.Fatal("a host that finished its handshake was evicted for a bare initialize")
	}
	if th.session(first) != nil {
		t.Error("the least recently used bare session was not the one evicted")
	}
	if n := th.sessionCount(); n != 4 {
		t.Errorf("%d sessions open, want the table's 4", n)
	}
	newest := th.initialize()
	th.finish(newest)
	last := th.initialize()
	th.finish(last)
	status, body := th.call("", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions") {
		t.Fatalf("a fifth session of 4 whose hosts all finished their handshake: HTTP %d %s, want 503 naming the limit", status, body)
	}
}

// One client address cannot take every session while another waits; at
// its limit, its own bare sessions make room, never another address's.
func TestSessionsPerClient(t *testing.T) {
	th := newTestHandler(t, Options{MaxSessions: 4, MaxSessionsPerClient: 2}, nil)
	h := th.Handler
	open := func(addr string) (int, string, string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
		req.RemoteAddr = addr
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String(), rec.Header().Get("Mcp-Session-Id")
	}
	other, _, otherID := open("10.0.0.2:1000")
	if other != http.StatusOK {
		t.Fatalf("a bare session of 10.0.0.2: HTTP %d", other)
	}
	var ids []string
	for i, addr := range []string{"10.0.0.1:1000", "10.0.0.1:1001"} {
		code, body, id := open(addr)
		if code != http.StatusOK {
			t.Fatalf("session %d of 10.0.0.1: HTTP %d %s", i, code, body)
		}
		ids = append(ids, id)
	}
	if code, body, _ := open("10.0.0.1:1002"); code != http.StatusOK {
		t.Fatalf("a third session of 10.0.0.1 with two bare ones: HTTP %d %s, want one of its own evicted", code, body)
	}
	if th.session(otherID) == nil {
		t.Fatal("another address's session was evicted for 10.0.0.1's")
	}
	if th.session(ids[0]) != nil {
		t.Error("10.0.0.1's least recently used bare session is still open")
	}
	th.finish(ids[1])
	code, _, id := open("10.0.0.1:1003")
	if code != http.StatusOK {
		t.Fatalf("a fourth session of 10.0.0.1 with one bare one: HTTP %d", code)
	}
	th.finish(id)
	if code, body, _ := open("10.0.0.1:1004"); code != http.StatusServiceUnavailable || !strings.Contains(body, "from this address") {
		t.Errorf("a session of 10.0.0.1 with both of its own finished: HTTP %d %s, want 503 naming the limit per address", code, body)
	}
	if code, body, _ := open("10.0.0.2:1001"); code != http.StatusOK {
		t.Errorf("another address while 10.0.0.1 is at its limit: HTTP %d %s", code, body)
	}
}
