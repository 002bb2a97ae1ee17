package upstream

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// The server ends the SSE stream: the connection is gone, the server is
// failed with the reason (no restart policy here), and calls say so.
func TestSSEStreamEnds(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "sse")
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	c := th.startOne(t, remoteConfig(t, "legacy", "sse", r.url, ""))
	r.sse.CloseSessions()
	waitFor(t, "the server to fail", 5*time.Second, func() bool { st, _ := c.State(); return st == StateFailed })
	_, stErr := c.State()
	if !strings.Contains(stErr.Error(), `server "legacy" went away`) || !strings.Contains(stErr.Error(), "closed the SSE stream") {
		t.Errorf("state error %v", stErr)
	}
	t.Logf("state error: %v", stErr)
	_, err := callTool(context.Background(), c, "echo", map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), `server "legacy"`) {
		t.Errorf("call after the stream ended: %v", err)
	}
	t.Logf("caller saw: %v", err)
}

// An endpoint event that points elsewhere is refused: nothing is sent there.
func TestSSEEndpointOnAnotherOrigin(t *testing.T) {
	checkLeaks(t)
	rec := &recorder{}
	rec.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "event: endpoint\ndata: http://203.0.113.7:9/message?sessionId=1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv := serveLoopback(t, rec)
	defer srv.Close()
	defer srv.CloseClientConnections()
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "legacy", "sse", srv.URL+"/sse", "")})
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("got %v, want the endpoint refused", err)
	}
	t.Logf("caller saw: %v", err)
}

// An SSE server that never sends its endpoint: start fails at the connect
// timeout, naming it.
func TestSSENoEndpoint(t *testing.T) {
	checkLeaks(t)
	rec := &recorder{}
	rec.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, ": waiting\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv := serveLoopback(t, rec)
	defer srv.Close()
	defer srv.CloseClientConnections()
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "legacy", "sse", srv.URL+"/sse", `{"connect": "300ms"}`)})
	if err == nil || !strings.Contains(err.Error(), "timeouts.connect") {
		t.Fatalf("got %v, want a connect timeout", err)
	}
	t.Logf("caller saw: %v", err)
}

func TestReadSSE(t *testing.T) {
	in := ": comment\r\n" +
		"retry: 1500\n" +
		"id: 7\n" +
		"\n" + // an id-only event (priming)
		"event: endpoint\n" +
		"data: /message?x=1\r\n" +
		"\r\n" +
		"data: {\"a\":\n" +
		"data:  1}\n" +
		"id: 8\n" +
		"\n" +
		"event: custom\n" +
		"data\n" +
		"\n" +
		"data: unfinished"
	var got []sseEvent
	if err := readSSE(strings.NewReader(in), func(ev sseEvent) bool { got = append(got, ev); return true }); err != nil {
		t.Fatal(err)
	}
	want := []sseEvent{
		{name: "message", id: "7", hasID: true, retry: 1500 * time.Millisecond, hasRetry: true},
		{name: "endpoint", data: []byte("/message?x=1")},
		{name: "message", data: []byte("{\"a\":\n 1}"), id: "8", hasID: true},
		{name: "custom", data: []byte("")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	// Stopping early.
	n := 0
	_ = readSSE(strings.NewReader(in), func(sseEvent) bool { n++; return false })
	if n != 1 {
		t.Errorf("fn called %d times after asking to stop", n)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:              "{\"a\":1}\n",
		"{\n  \"a\": 1\n}":     "{\"a\":1}\n",
		"not\njson":            "not json\n",
		"{\"s\":\"x\\ny\"}":    "{\"s\":\"x\\ny\"}\n",
		"{\r\n\"b\": [1,\n2]}": "{\"b\":[1,2]}\n",
	} {
		if got := string(oneLine([]byte(in))); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
