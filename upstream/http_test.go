package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/upstream/transport/remote"
)

// Both HTTP transports against real mcp-go servers on 127.0.0.1.

func TestRemoteBasics(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			r.requireToken()
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			ctx := context.Background()

			if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "remote", typ, r.url, "")}); err != nil {
				t.Fatalf("StartAll: %v", err)
			}
			c, _ := th.Client("remote")
			if st, err := c.State(); st != StateReady {
				t.Fatalf("state %s (%v), want ready", st, err)
			}
			<-c.Settled()
			cat := c.Catalog()
			if len(cat.Tools) != 4 || len(cat.Prompts) != 1 || len(cat.Resources) != 1 || len(cat.Templates) != 1 {
				t.Fatalf("catalog: %d tools, %d prompts, %d resources, %d templates; want 4, 1, 1, 1",
					len(cat.Tools), len(cat.Prompts), len(cat.Resources), len(cat.Templates))
			}
			if init := c.Init(); init.ProtocolVersion == "" || !strings.Contains(string(init.ServerInfo), "remote-test") {
				t.Errorf("init result: %+v", init)
			}

			// A tool call: the raw result, exactly as the server sent it.
			raw, err := callTool(ctx, c, "echo", map[string]any{"text": "hello"})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if got := toolText(t, raw); got != "echo: hello" {
				t.Errorf("tool result text %q", got)
			}

			// A JSON-RPC error passes through as the server sent it.
			_, err = callTool(ctx, c, "no-such-tool", nil)
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code == jsonrpc.CodeUnavailable || !strings.Contains(rpcErr.Message, "no-such-tool") {
				t.Errorf("unknown tool: got %v, want the server's JSON-RPC error", err)
			}

			raw, err = c.Call(ctx, "prompts/get", json.RawMessage(`{"name":"greet","arguments":{"name":"Ada"}}`))
			if err != nil || !strings.Contains(string(raw), "Hello, Ada") {
				t.Errorf("prompts/get: %s, %v", raw, err)
			}
			raw, err = c.Call(ctx, "resources/read", json.RawMessage(`{"uri":"test://static/readme"}`))
			if err != nil || !strings.Contains(string(raw), "read me") {
				t.Errorf("resources/read: %s, %v", raw, err)
			}

			// Progress notifications during a call reach the host, and the
			// result still arrives (for streamable HTTP the reply turns into
			// an event stream).
			raw, err = callTool(ctx, c, "progress", nil)
			if err != nil || toolText(t, raw) != "done" {
				t.Fatalf("progress tool: %s, %v", raw, err)
			}
			// (At least one: mcp-go's streamable server can drop a
			// notification that races the end of the reply.
			// TestStreamableHTTPReplyStream checks every one arrives.)
			waitFor(t, "progress notifications", 5*time.Second, func() bool {
				for _, s := range th.notifications() {
					if strings.HasPrefix(s, "notifications/progress ") {
						return true
					}
				}
				return false
			})

			// Every request carried the configured headers.
			for _, req := range r.rec.all() {
				if req.header.Get("Authorization") != "Bearer "+testToken || req.header.Get("X-Trace") != "on" {
					t.Errorf("%s %s (%s) without the configured headers", req.method, req.path, req.rpcMethod)
				}
				if !strings.HasPrefix(req.header.Get("User-Agent"), "mcptrunk/") {
					t.Errorf("%s %s: User-Agent %q", req.method, req.path, req.header.Get("User-Agent"))
				}
			}
			if typ == "http" {
				checkSessionHeaders(t, r.rec, c.Init().ProtocolVersion)
			}

			th.closeHost(t)
			if typ == "http" {
				waitFor(t, "the DELETE of the session", 5*time.Second, func() bool { return r.rec.count(http.MethodDelete, "") == 1 })
				del := r.rec.find(func(q recorded) bool { return q.method == http.MethodDelete })[0]
				if del.header.Get("Mcp-Session-Id") == "" {
					t.Error("DELETE without the session id")
				}
			}
			logs := th.logs.String()
			if !strings.Contains(logs, "Authorization") {
				t.Errorf("the log should name the configured headers:\n%s", logs)
			}
		})
	}
}

// checkSessionHeaders: everything after initialize carries the one session
// id the server gave and the negotiated protocol version; a GET stream was
// opened after initialization.
func checkSessionHeaders(t *testing.T, rec *recorder, protocol string) {
	t.Helper()
	sessions := map[string]bool{}
	sawInit := false
	for _, q := range rec.all() {
		if q.rpcMethod == "initialize" {
			sawInit = true
			if q.header.Get("Mcp-Session-Id") != "" {
				t.Error("initialize carried a session id")
			}
			continue
		}
		if !sawInit {
			t.Errorf("%s %s before initialize", q.method, q.rpcMethod)
		}
		if q.method == http.MethodDelete {
			continue
		}
		sessions[q.header.Get("Mcp-Session-Id")] = true
		if got := q.header.Get("Mcp-Protocol-Version"); got != protocol {
			t.Errorf("%s %s: MCP-Protocol-Version %q, want %q", q.method, q.rpcMethod, got, protocol)
		}
		if q.method == http.MethodPost && q.header.Get("Content-Type") != "application/json" {
			t.Errorf("POST %s: Content-Type %q", q.rpcMethod, q.header.Get("Content-Type"))
		}
		if q.method == http.MethodPost && q.header.Get("Accept") != "application/json, text/event-stream" {
			t.Errorf("POST %s: Accept %q", q.rpcMethod, q.header.Get("Accept"))
		}
	}
	if len(sessions) != 1 || sessions[""] {
		t.Errorf("session ids sent after initialize: %v, want exactly one", sessions)
	}
	gets := rec.find(func(q recorded) bool { return q.method == http.MethodGet })
	if len(gets) == 0 || gets[0].header.Get("Accept") != "text/event-stream" {
		t.Errorf("no standalone GET stream opened (%d GETs)", len(gets))
	}
	// notifications/initialized came before any other request.
	var order []string
	for _, q := range rec.all() {
		if q.method == http.MethodPost {
			order = append(order, q.rpcMethod)
		}
	}
	if len(order) < 3 || order[0] != "initialize" || order[1] != "notifications/initialized" {
		t.Errorf("POST order %v: want initialize, notifications/initialized, ...", order)
	}
}

// The server forgets the session (it restarted): the next call re-runs the
// handshake and succeeds, the lists are read again, and the server's event
// stream follows the new session.
func TestStreamableHTTPSessionExpiry(t *testing.T) {
	checkLeaks(t)
	r := startRemote(t, "http", server.WithStateful(true))
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	ctx := context.Background()
	if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "remote", "http", r.url, "")}); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	c, _ := th.Client("remote")
	<-c.Settled()
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
	if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "remote", "http", r.url, "")}); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	c, _ := th.Client("remote")
	<-c.Settled()
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
	if err := th.StartAll(ctx, []config.Spec{remoteConfig(t, "remote", "http", r.url, "")}); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	c, _ := th.Client("remote")
	<-c.Settled()
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

// Nothing listens on the port: the server fails at once with an error that
// names it and says "connection refused".
func TestRemoteConnectionRefused(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + ln.Addr().String() + "/mcp?key=" + testToken
			ln.Close()
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			began := time.Now()
			err = th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "remote", typ, url, "")})
			if err == nil {
				t.Fatal("StartAll succeeded against a closed port")
			}
			if d := time.Since(began); d > 3*time.Second {
				t.Errorf("failing took %v", d)
			}
			c, _ := th.Client("remote")
			st, stErr := c.State()
			if st != StateFailed || stErr == nil {
				t.Fatalf("state %s (%v), want failed", st, stErr)
			}
			msg := stErr.Error()
			if !strings.Contains(msg, `server "remote"`) || !strings.Contains(msg, "connection refused") {
				t.Errorf("error %q: want it to name the server and say connection refused", msg)
			}
			if strings.Contains(msg, testToken) || strings.Contains(th.logs.String(), testToken) {
				t.Errorf("the URL's secret leaked: %q", msg)
			}
			t.Logf("%s: %v", typ, stErr)
		})
	}
}

// The server rejects the token: a clear error at start, and at a call when
// the token is revoked later.
func TestRemoteUnauthorized(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
				// Echoes the header back, as careless gateways do.
				http.Error(w, "bad token "+req.Header.Get("Authorization"), http.StatusUnauthorized)
				return true
			})
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "remote", typ, r.url, "")})
			if err == nil {
				t.Fatal("StartAll succeeded with a rejected token")
			}
			msg := err.Error()
			for _, want := range []string{`server "remote"`, "HTTP 401 Unauthorized", "check its headers/token", "[redacted]"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, testToken) {
				t.Errorf("the token leaked into the error: %q", msg)
			}
			t.Logf("%s at start: %v", typ, err)
		})
		t.Run(typ+"/revoked", func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			if err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "remote", typ, r.url, "")}); err != nil {
				t.Fatalf("StartAll: %v", err)
			}
			c, _ := th.Client("remote")
			<-c.Settled()
			r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
				if req.Method != http.MethodPost {
					return false
				}
				http.Error(w, "revoked", http.StatusUnauthorized)
				return true
			})
			_, err := callTool(context.Background(), c, "echo", map[string]any{"text": "x"})
			if err == nil || !strings.Contains(err.Error(), `server "remote"`) || !strings.Contains(err.Error(), "HTTP 401 Unauthorized: check its headers/token") {
				t.Fatalf("call: got %v", err)
			}
			t.Logf("%s on a call: %v", typ, err)
		})
	}
}

// A tool slower than timeouts.call: the caller gets an error naming the
// server, and the server is told (notifications/cancelled) and its handler
// stops.
func TestRemoteCallTimeoutCancels(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			spec := remoteConfig(t, "remote", typ, r.url, `{"connect": "5s", "list": "5s", "call": "300ms"}`)
			if err := th.StartAll(context.Background(), []config.Spec{spec}); err != nil {
				t.Fatalf("StartAll: %v", err)
			}
			c, _ := th.Client("remote")
			<-c.Settled()
			began := time.Now()
			_, err := callTool(context.Background(), c, "slow", nil)
			if err == nil || !strings.Contains(err.Error(), `server "remote"`) || !strings.Contains(err.Error(), "timed out") {
				t.Fatalf("slow call: got %v, want a timeout naming the server", err)
			}
			if d := time.Since(began); d > 2*time.Second {
				t.Errorf("the call took %v with a 300ms timeout", d)
			}
			t.Logf("caller saw: %v", err)
			select {
			case <-r.cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the server's handler was never cancelled")
			}
			call := r.rec.find(func(q recorded) bool { return q.rpcMethod == "tools/call" })
			waitFor(t, "notifications/cancelled at the server", 5*time.Second, func() bool {
				for _, q := range r.rec.find(func(q recorded) bool { return q.rpcMethod == "notifications/cancelled" }) {
					var p struct {
						RequestID json.RawMessage `json:"requestId"`
					}
					if json.Unmarshal(q.params, &p) == nil && string(p.RequestID) == call[0].rpcID {
						return true
					}
				}
				return false
			})
			// The connection is still good.
			if raw, err := callTool(context.Background(), c, "echo", map[string]any{"text": "still here"}); err != nil || toolText(t, raw) != "echo: still here" {
				t.Errorf("call after the timeout: %s, %v", raw, err)
			}
		})
	}
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

// A notification the server sends outside any call arrives on the event
// stream and reaches the host.
func TestRemoteServerNotification(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			if err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "remote", typ, r.url, "")}); err != nil {
				t.Fatalf("StartAll: %v", err)
			}
			c, _ := th.Client("remote")
			<-c.Settled()
			waitFor(t, "notifications/message", 5*time.Second, func() bool {
				r.mcp.SendNotificationToAllClients("notifications/message", map[string]any{"level": "warning", "data": "disk full"})
				time.Sleep(50 * time.Millisecond)
				for _, n := range th.notifications() {
					if strings.HasPrefix(n, "notifications/message ") && strings.Contains(n, "disk full") {
						return true
					}
				}
				return false
			})
		})
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

// Closing the host while a call is in flight ends the call at once and
// leaves nothing behind.
func TestRemoteCloseDuringCall(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			th := newTestHost(t, nil)
			if err := th.StartAll(context.Background(), []config.Spec{remoteConfig(t, "remote", typ, r.url, "")}); err != nil {
				t.Fatalf("StartAll: %v", err)
			}
			c, _ := th.Client("remote")
			<-c.Settled()
			errc := make(chan error, 1)
			go func() {
				_, err := callTool(context.Background(), c, "slow", nil)
				errc <- err
			}()
			waitFor(t, "the call to reach the server", 5*time.Second, func() bool { return r.rec.count(http.MethodPost, "tools/call") == 1 })
			began := time.Now()
			th.closeHost(t)
			select {
			case err := <-errc:
				if err == nil {
					t.Error("the call succeeded")
				}
				t.Logf("caller saw: %v", err)
			case <-time.After(5 * time.Second):
				t.Fatal("the call did not end at Close")
			}
			if d := time.Since(began); d > 3*time.Second {
				t.Errorf("Close took %v", d)
			}
		})
	}
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
