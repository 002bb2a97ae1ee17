package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
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
			c := th.startOne(t, remoteConfig(t, "remote", typ, r.url, ""))
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
			c := th.startOne(t, spec)
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

// A notification the server sends outside any call arrives on the event
// stream and reaches the host.
func TestRemoteServerNotification(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			th := newTestHost(t, nil)
			defer th.closeHost(t)
			th.startOne(t, remoteConfig(t, "remote", typ, r.url, ""))
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

// Closing the host while a call is in flight ends the call at once and
// leaves nothing behind.
func TestRemoteCloseDuringCall(t *testing.T) {
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			checkLeaks(t)
			r := startRemote(t, typ)
			th := newTestHost(t, nil)
			c := th.startOne(t, remoteConfig(t, "remote", typ, r.url, ""))
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
