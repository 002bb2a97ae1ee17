package httpserve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// A request the host cancels ends its exchange at once (no answer, as MCP
// says: 204 for a JSON-only client, the end of the event stream
// otherwise) and frees its slot: many more cancellations than a session
// may have requests in flight leave it answering.
func TestCancelledRequestEndsAndFreesItsSlot(t *testing.T) {
	got := make(chan string, 1)
	th := newTestHandler(t, Options{MaxInFlight: 2}, hangs(got))
	sid := th.initialize()
	for i := range 6 {
		accept := []string{"application/json", "text/event-stream"}[i%2]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		answered := make(chan *http.Response, 1)
		go func() {
			resp, err := th.post(ctx, sid, accept, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hang"}`, 100+i))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				resp = nil
			}
			answered <- resp
		}()
		<-got // in flight
		if status, body := th.call(sid, "", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"user"}}`, 100+i)); status != http.StatusAccepted {
			t.Fatalf("the cancellation: HTTP %d %s", status, body)
		}
		resp := <-answered
		if resp == nil {
			cancel()
			t.FailNow()
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		cancel()
		if err != nil {
			t.Fatalf("request %d (Accept %s): %v", i, accept, err)
		}
		want := map[string]int{"application/json": http.StatusNoContent, "text/event-stream": http.StatusOK}[accept]
		if resp.StatusCode != want || strings.Contains(string(body), `"id"`) {
			t.Errorf("cancelled request %d (Accept %s): HTTP %d %q, want %d and no answer", i, accept, resp.StatusCode, body, want)
		}
	}
	if n := th.session(sid).router.inFlight(); n != 0 {
		t.Errorf("%d requests in flight after every one was cancelled", n)
	}
	if status, body := th.call(sid, "", `{"jsonrpc":"2.0","id":"after","method":"ping"}`); status != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Errorf("a request after 6 cancellations with 2 slots: HTTP %d %s", status, body)
	}
}

// A request whose id is not a string or a number, whose method is not a
// non-empty string, or whose jsonrpc is not "2.0", is an invalid request: -32600 with id null, in a
// session or not, and it holds no slot.
func TestInvalidRequestsAreRefused(t *testing.T) {
	th := newTestHandler(t, Options{MaxInFlight: 1}, hangs(make(chan string, 10)))
	sid := th.initialize()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"hang"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"hang"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"hang"}`,
		`{"jsonrpc":"2.0","id":true,"method":"hang"}`,
		`{"jsonrpc":"2.0","id":false,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":""}`,
		`{"jsonrpc":"2.0","id":7,"method":null}`,
		`{"jsonrpc":"2.0","id":7,"method":3}`,
		`{"jsonrpc":"2.0","method":""}`,
		`{"jsonrpc":"2.0","method":null}`,
		`{"jsonrpc":"1.0","id":7,"method":"ping"}`,
		`{"id":7,"method":"ping"}`,
		`{"jsonrpc":2,"id":7,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":7,"result":{}}`,
	} {
		for _, session := range []string{sid, ""} {
			status, answer := th.call(session, "", body)
			if status != http.StatusBadRequest {
				t.Errorf("%s (session %q): HTTP %d %s, want 400", body, session, status, answer)
				continue
			}
			id, code, msg := rpcErrorOf(t, answer)
			if string(id) != "null" || code != jsonrpc.CodeInvalidRequest {
				t.Errorf("%s: id %s code %d (%s), want null and %d", body, id, code, msg, jsonrpc.CodeInvalidRequest)
			}
		}
	}
	if n := th.session(sid).router.inFlight(); n != 0 {
		t.Errorf("%d invalid requests hold a slot", n)
	}
	// What is wrong is not echoed whole: an id of 1 MB gets an answer of a
	// few KB.
	status, answer := th.call(sid, "", `{"jsonrpc":"2.0","id":{"a":"`+strings.Repeat("x", 1<<20)+`"},"method":"ping"}`)
	if _, code, _ := rpcErrorOf(t, answer); status != http.StatusBadRequest || code != jsonrpc.CodeInvalidRequest || len(answer) > 4<<10 {
		t.Errorf("an id of 1 MB: HTTP %d, %d bytes: %.200s", status, len(answer), answer)
	}
	if status, body := th.call(sid, "", `{"jsonrpc":"2.0","id":"ok","method":"ping"}`); status != http.StatusOK {
		t.Errorf("a valid request after the invalid ones: HTTP %d %s", status, body)
	}
}

// At shutdown a request in flight gets an error that says the trunk is
// shutting down, as a JSON body or as the last event of its stream, never
// an empty answer.
func TestShutdownAnswersRequestsInFlight(t *testing.T) {
	got := make(chan string, 2)
	th := newTestHandler(t, Options{}, hangs(got))
	sid := th.initialize()
	type answer struct {
		status int
		body   string
		err    error
	}
	answers := map[string]chan answer{}
	for _, accept := range []string{"application/json", "text/event-stream"} {
		ch := make(chan answer, 1)
		answers[accept] = ch
		go func() {
			resp, err := th.post(context.Background(), sid, accept, `{"jsonrpc":"2.0","id":"`+accept+`","method":"hang"}`)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			ch <- answer{resp.StatusCode, string(b), err}
		}()
		<-got
	}
	th.Close()
	for accept, ch := range answers {
		a := <-ch
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"error"`) || !strings.Contains(a.body, "shutting down") || !strings.Contains(a.body, `"id":"`+accept+`"`) {
			t.Errorf("Accept %s at shutdown: HTTP %d %q (%v), want an error that says the trunk is shutting down", accept, a.status, a.body, a.err)
		}
	}
}
