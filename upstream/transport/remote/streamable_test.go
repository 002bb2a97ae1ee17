package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// noRequests is the handler of a connection whose server sends nothing of
// its own.
type noRequests struct{}

func (noRequests) HandleRequest(context.Context, jsonrpc.Request) (json.RawMessage, error) {
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "none"}
}
func (noRequests) HandleNotification(string, json.RawMessage) {}

// eventServer answers every request POSTed to it with an event stream that
// holds the answer, and anything else with 202 (405 for the GET stream).
// With hold, a reply's stream stays open after the answer until the test
// ends. conns reports how many requests came over each client connection.
func eventServer(t *testing.T, hold bool) (url string, conns func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg, ok := postedRequest(w, r)
		if !ok {
			return
		}
		mu.Lock()
		seen[r.RemoteAddr]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", msg.ID)
		w.(http.Flusher).Flush()
		if hold {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler holds srv.Close up
	return srv.URL, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

func startEventClient(t *testing.T, url string) *Streamable {
	t.Helper()
	c, err := StartStreamable(Endpoint{ID: "events", URL: url}, noRequests{}, slog.New(slog.DiscardHandler), jsonrpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// setReplyEndWait sets replyEndWait for one test, until the transports
// the test started are closed.
func setReplyEndWait(t *testing.T, d time.Duration) {
	was := replyEndWait
	replyEndWait = d
	t.Cleanup(func() { replyEndWait = was })
}

// replyEnds returns a channel that gets a value each time the transport
// is done with a reply's end (endReply), for one test.
func replyEnds(t *testing.T) <-chan struct{} {
	ch := make(chan struct{}, 100)
	replyEnded = func() { ch <- struct{}{} }
	t.Cleanup(func() { replyEnded = nil })
	return ch
}

// A reply stream is read to its end after the answer, so one call after
// another goes over one connection: a reply closed before its end would
// close its connection, and every call would open one. The end is read
// after the call returned (TestReplyHeldOpenAfterTheAnswer): each call
// waits for the end of the one before, as a later call would otherwise
// race the connection's return to the idle pool.
func TestCallsReuseTheConnection(t *testing.T) {
	setReplyEndWait(t, time.Minute) // the server ends each stream at once; no load delays it past this
	ended := replyEnds(t)
	url, conns := eventServer(t, false)
	c := startEventClient(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 20 {
		if res, err := c.Call(ctx, "ping", nil); err != nil || string(res) != "{}" {
			t.Fatalf("call %d: %s, %v", i, res, err)
		}
		select {
		case <-ended:
		case <-ctx.Done():
			t.Fatalf("call %d: its reply's end was never read", i)
		}
	}
	if got := conns(); len(got) != 1 {
		t.Errorf("20 calls one after another came over %d connections (%v), want 1", len(got), got)
	}
}

// A server that keeps a reply's stream open after the answer does not hold
// its call up: the call returns with the answer while the server still
// holds the stream open (until the test ends), and the stream's end is
// waited for off the caller's path, no longer than replyEndWait.
func TestReplyHeldOpenAfterTheAnswer(t *testing.T) {
	setReplyEndWait(t, time.Hour) // a caller that waited for the end would wait this long
	url, conns := eventServer(t, true)
	c := startEventClient(t, url)
	for i := range 2 {
		done := make(chan error, 1)
		go func() {
			res, err := c.Call(context.Background(), "ping", nil)
			if err == nil && string(res) != "{}" {
				err = fmt.Errorf("result %s, want {}", res)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d has not returned 10 s after its answer came: it waits for the end of a stream the server holds open", i)
		}
	}
	if got := conns(); len(got) != 2 {
		t.Errorf("2 calls whose streams were held open came over %d connections (%v), want 2: each keeps its own", len(got), got)
	}
}

// A call whose request met an expired session ends when its ctx does,
// while the session's renewal still waits for the server's initialize
// reply: the renewal is not on the caller's goroutine.
func TestCancelDuringSessionRenewal(t *testing.T) {
	reinit := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.Unmarshal(body, &msg)
		switch {
		case len(msg.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize" && strings.Contains(string(msg.ID), "reinit"):
			reinit <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
		default:
			w.WriteHeader(http.StatusNotFound) // the session expired
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := StartStreamable(Endpoint{ID: "slow", URL: srv.URL, ConnectTimeout: time.Minute}, noRequests{}, slog.New(slog.DiscardHandler), jsonrpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	if _, err := c.Call(context.Background(), "initialize", json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Call(ctx, "tools/list", nil); done <- err }()
	<-reinit
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("call = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call is still waiting 5 s after its ctx ended")
	}
}

// blockingNotifications is the handler of a connection whose notification
// handler blocks until unblock is closed, saying on entered that it has.
type blockingNotifications struct {
	noRequests
	entered chan struct{}
	unblock chan struct{}
}

func (h blockingNotifications) HandleNotification(string, json.RawMessage) {
	select {
	case h.entered <- struct{}{}:
	default:
	}
	<-h.unblock
}

// A call whose reply stream brings a notification before the answer ends
// when its ctx does, while the handler of that notification still blocks:
// the caller that reads its own reply does not run the handler itself.
func TestCancelWhileANotificationIsHandled(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := postedRequest(w, r); !ok {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
		w.(http.Flusher).Flush()
		select { // the answer never comes
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	h := blockingNotifications{entered: make(chan struct{}, 1), unblock: make(chan struct{})}
	c, err := StartStreamable(Endpoint{ID: "busy", URL: srv.URL}, h, slog.New(slog.DiscardHandler), jsonrpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(context.Background()) }()
	defer close(h.unblock)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Call(ctx, "tools/list", nil); done <- err }()
	<-h.entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("call = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call is still waiting 5 s after its ctx ended")
	}
}

// postedRequest reads the request a test server was POSTed, answering
// anything else itself: 405 for the GET stream, 202 for a notification or
// a response. ok says whether the caller answers a request.
func postedRequest(w http.ResponseWriter, r *http.Request) (msg struct{ ID json.RawMessage }, ok bool) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return msg, false
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return msg, false
	}
	return msg, true
}
