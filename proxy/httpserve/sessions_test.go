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
	status, body := th.call("", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions") {
		t.Fatalf("a fifth session of 4: HTTP %d %s", status, body)
	}
	waitFor(t, "the bare sessions to expire", func() bool { return th.sessionCount() == 1 })
	if th.session(used) == nil {
		t.Error("the session in use expired with the bare ones")
	}
	th.initialize()
}

// One client address cannot take every session while another waits.
func TestSessionsPerClient(t *testing.T) {
	h := newTestHandler(t, Options{MaxSessions: 4, MaxSessionsPerClient: 2}, nil).Handler
	open := func(addr string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
		req.RemoteAddr = addr
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for i, addr := range []string{"10.0.0.1:1000", "10.0.0.1:1001"} {
		if code, body := open(addr); code != http.StatusOK {
			t.Fatalf("session %d of 10.0.0.1: HTTP %d %s", i, code, body)
		}
	}
	if code, body := open("10.0.0.1:1002"); code != http.StatusServiceUnavailable || !strings.Contains(body, "from this address") {
		t.Errorf("a third session of 10.0.0.1: HTTP %d %s, want 503 naming the limit per address", code, body)
	}
	if code, body := open("10.0.0.2:1000"); code != http.StatusOK {
		t.Errorf("another address while 10.0.0.1 is at its limit: HTTP %d %s", code, body)
	}
}
