package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	srv := serveSSEStub(t, "event: endpoint\ndata: http://203.0.113.7:9/message?sessionId=1\n\n")
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
	srv := serveSSEStub(t, ": waiting\n\n")
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

// serveSSEStub serves, on 127.0.0.1, an SSE stream that sends first and then
// stays open, silent, until the client goes.
func serveSSEStub(t *testing.T, first string) *httptest.Server {
	t.Helper()
	rec := &recorder{}
	rec.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, first)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	return serveLoopback(t, rec)
}
