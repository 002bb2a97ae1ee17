package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/upstream/transport/remote"
)

// The server forgets the session (it restarted): the next call re-runs the
// handshake and succeeds, the lists are read again, and the server's event
// stream follows the new session.
func TestStreamableHTTPSessionExpiry(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http", server.WithStateful(true))
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	ctx := context.Background()
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))
	if _, err := callTool(ctx, c, "echo", map[string]any{"text": "before"}); err != nil {
		t.Fatalf("first call: %v", err)
	}
	lists := r.rec.count(http.MethodPost, "tools/list")

	// Restart: a fresh server with no memory of the session.
	fresh := newTestMCPServer(r.cancelled, r.stop)
	r.rec.setHandler(server.NewStreamableHTTPServer(fresh, server.WithStateful(true)))

	raw, err := callTool(ctx, c, "echo", map[string]any{"text": "after"})
	if err != nil {
		t.Fatalf("call after the server forgot the session: %v", err)
	}
	if got := toolText(t, raw); got != "echo: after" {
		t.Errorf("result %q", got)
	}
	if n := r.rec.count(http.MethodPost, "initialize"); n != 2 {
		t.Errorf("%d initialize requests, want 2", n)
	}
	if st, err := c.State(); st != StateReady {
		t.Errorf("state %s (%v), want ready", st, err)
	}
	waitFor(t, "the lists to be read again", 5*time.Second, func() bool {
		return r.rec.count(http.MethodPost, "tools/list") > lists
	})

	// The event stream reopened on the new session.
	sessions := map[string]bool{}
	for _, q := range r.rec.find(func(q recorded) bool { return q.rpcMethod == "tools/call" }) {
		sessions[q.header.Get("Mcp-Session-Id")] = true
	}
	if len(sessions) != 2 {
		t.Errorf("tools/call went out with %d session ids, want 2 (old, then new)", len(sessions))
	}
	waitFor(t, "a notification over the new session's stream", 5*time.Second, func() bool {
		fresh.SendNotificationToAllClients("notifications/message", map[string]any{"level": "info", "data": "after restart"})
		for _, n := range th.notifications() {
			if strings.Contains(n, "after restart") {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
		return false
	})
}

// A server that says "no valid session" with 400 (the TypeScript SDK's
// example servers) is treated like a 404.
func TestStreamableHTTPSessionExpiry400(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http")
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	ctx := context.Background()
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))
	stale := r.rec.find(func(q recorded) bool { return q.rpcMethod == "tools/list" })[0].header.Get("Mcp-Session-Id")
	r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
		if req.Header.Get("Mcp-Session-Id") != stale || req.Method == http.MethodDelete {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":%s}`, orNull(rec.rpcID))
		return true
	})
	raw, err := callTool(ctx, c, "echo", map[string]any{"text": "again"})
	if err != nil || toolText(t, raw) != "echo: again" {
		t.Fatalf("call after the session was refused: %s, %v", raw, err)
	}
}

func orNull(id string) string {
	if id == "" {
		return "null"
	}
	return id
}

// A re-handshake that fails ends the connection: the caller gets an error
// naming the server and the reason, and the server is failed (no restart
// policy here).
func TestStreamableHTTPSessionRenewFails(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http", server.WithStateful(true))
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	ctx := context.Background()
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))
	r.rec.setHandler(server.NewStreamableHTTPServer(newTestMCPServer(r.cancelled, r.stop), server.WithStateful(true)))
	// ...and the restarted server no longer accepts the token.
	r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
		if rec.rpcMethod == "initialize" {
			http.Error(w, "token expired", http.StatusUnauthorized)
			return true
		}
		return false
	})
	_, err := callTool(ctx, c, "echo", map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), `"remote"`) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("call: got %v, want an error naming the server and HTTP 401", err)
	}
	t.Logf("caller saw: %v", err)
	waitFor(t, "the server to fail", 5*time.Second, func() bool { st, _ := c.State(); return st == StateFailed })
	_, stErr := c.State()
	if !strings.Contains(stErr.Error(), "starting a new one failed") {
		t.Errorf("state error %v", stErr)
	}
	t.Logf("state error: %v", stErr)
}

// The server asks for sampling on its event stream; the host answers and
// the answer reaches the server.
func TestStreamableHTTPSampling(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http")
	th := newTestHost(t, func(method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "sampling/createMessage" || !strings.Contains(string(params), "say hi") {
			return nil, fmt.Errorf("unexpected %s %s", method, params)
		}
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi there"},"model":"test-model"}`), nil
	})
	defer th.closeHost(t)
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))
	waitFor(t, "the event stream", 5*time.Second, func() bool { return r.rec.count(http.MethodGet, "") > 0 })
	raw, err := callTool(context.Background(), c, "sample", nil)
	if err != nil {
		t.Fatalf("sample: %v", err)
	}
	if got := toolText(t, raw); got != "model said: hi there" {
		t.Errorf("result %q", got)
	}
	if reqs := th.serverRequests(); len(reqs) != 1 || reqs[0] != "sampling/createMessage" {
		t.Errorf("server requests seen by the host: %v", reqs)
	}
	// The answer was POSTed with the session id.
	answers := r.rec.find(func(q recorded) bool { return q.method == http.MethodPost && q.rpcMethod == "" && q.rpcID != "" })
	if len(answers) != 1 || answers[0].header.Get("Mcp-Session-Id") == "" {
		t.Errorf("answers POSTed: %+v", answers)
	}
}

// A server without a GET stream (405): calls work, and the transport does
// not keep asking.
func TestStreamableHTTPNoEventStream(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http", server.WithDisableStreaming(true))
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))
	if raw, err := callTool(context.Background(), c, "echo", map[string]any{"text": "x"}); err != nil || toolText(t, raw) != "echo: x" {
		t.Fatalf("call: %s, %v", raw, err)
	}
	time.Sleep(2 * remote.ListenRetryMin)
	if n := r.rec.count(http.MethodGet, ""); n != 1 {
		t.Errorf("%d GETs, want 1 (405 means no stream)", n)
	}
}

// Failures of single exchanges: each ends its call with an error naming the
// server and what happened, and the connection stays usable.
func TestStreamableHTTPExchangeFailures(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http")
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))

	cases := []struct {
		name   string
		answer func(w http.ResponseWriter, rec recorded)
		want   string
	}{
		{"500 with an HTML page", func(w http.ResponseWriter, rec recorded) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "<html>upstream exploded</html>\n<p>more</p>")
		}, `HTTP 500 Internal Server Error: the server failed (server said: "<html>upstream exploded</html>")`},
		{"503 from a gateway", func(w http.ResponseWriter, rec recorded) {
			http.Error(w, "no healthy upstream", http.StatusServiceUnavailable)
		}, "HTTP 503 Service Unavailable: the server, or a gateway in front of it, is unavailable"},
		{"connection dropped", func(w http.ResponseWriter, rec recorded) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, "the connection to 127.0.0.1"},
		{"reply without the response", func(w http.ResponseWriter, rec recorded) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		}, "the server ended its reply without answering the request"},
		{"event stream without the response", func(w http.ResponseWriter, rec recorded) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"y\"}}\n\n")
		}, "the server ended its reply without answering the request"},
		{"wrong content type", func(w http.ResponseWriter, rec recorded) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "OK")
		}, `unexpected content type "text/plain"`},
		{"pretty-printed JSON-RPC error in a 400", func(w http.ResponseWriter, rec recorded) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": %s,\n  \"error\": {\"code\": -32602, \"message\": \"bad arguments\"}\n}\n", rec.rpcID)
		}, "bad arguments (code -32602)"},
	}
	for _, tc := range cases {
		r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
			if rec.rpcMethod != "tools/call" {
				return false
			}
			tc.answer(w, rec)
			return true
		})
		_, err := callTool(context.Background(), c, "echo", map[string]any{"text": "x"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), `server "remote"`) && !strings.Contains(tc.name, "JSON-RPC error") {
			t.Errorf("%s: %v does not name the server", tc.name, err)
		}
		t.Logf("%s: caller saw: %v", tc.name, err)
	}
	r.rec.setIntercept(nil)
	if raw, err := callTool(context.Background(), c, "echo", map[string]any{"text": "fine"}); err != nil || toolText(t, raw) != "echo: fine" {
		t.Errorf("call after the failures: %s, %v", raw, err)
	}
}

// A streamable HTTP type pointed at a legacy SSE server says what to do.
func TestStreamableHTTPAtSSEServer(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "sse")
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "remote", "http", r.url, "")})
	if err == nil || !strings.Contains(err.Error(), `"type": "sse"`) {
		t.Fatalf("got %v, want a hint to use type sse", err)
	}
	t.Logf("caller saw: %v", err)
}

// A reply that is an event stream: notifications before the response all
// arrive, and a stream the server ends before answering (after giving
// event ids) is resumed with GET and Last-Event-ID.
func TestStreamableHTTPReplyStream(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http")
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	c := th.startOne(t, remoteConfig(t, "remote", "http", r.url, ""))
	progress := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`, i)
	}
	var callID atomic.Value
	r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
		switch {
		case rec.rpcMethod == "tools/call":
			callID.Store(rec.rpcID)
			w.Header().Set("Content-Type", "text/event-stream")
			// Pretty-printed data over several lines, then the server ends
			// the stream before the response.
			fmt.Fprintf(w, "retry: 20\nid: e1\ndata: %s\n\n", progress(1))
			fmt.Fprint(w, "id: e2\ndata: {\"jsonrpc\": \"2.0\",\ndata:  \"method\": \"notifications/progress\",\ndata:  \"params\": {\"progressToken\": \"t\", \"progress\": 2}}\n\n")
			return true
		case req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") == "e2":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: e3\ndata: %s\n\n", progress(3))
			fmt.Fprintf(w, "id: e4\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", callID.Load())
			return true
		}
		return false
	})
	raw, err := callTool(context.Background(), c, "echo", map[string]any{"text": "x"})
	if err != nil || toolText(t, raw) != "resumed" {
		t.Fatalf("call: %s, %v", raw, err)
	}
	var got []string
	for _, n := range th.notifications() {
		if strings.HasPrefix(n, "notifications/progress ") {
			got = append(got, n)
		}
	}
	if len(got) != 3 {
		t.Errorf("progress notifications: %q, want 3", got)
	}
	resumes := r.rec.find(func(q recorded) bool { return q.header.Get("Last-Event-ID") != "" })
	if len(resumes) != 1 || resumes[0].header.Get("Mcp-Session-Id") == "" {
		t.Errorf("resumptions: %+v", resumes)
	}
}
