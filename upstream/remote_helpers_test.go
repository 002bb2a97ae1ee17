package upstream

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"go.uber.org/goleak"
)

// Helpers for the tests of the HTTP transports: real mcp-go servers
// (streamable HTTP and SSE) on 127.0.0.1, behind a recorder that sees every
// HTTP request and can answer in the server's place.

// testToken is the bearer token the tests configure; it must never appear
// in a log record or an error.
const testToken = "tok-3f9a1c7e5b2d4a6c8e0f"

// recorded is one HTTP request a test server received.
type recorded struct {
	method    string // HTTP method
	path      string
	header    http.Header
	rpcMethod string // of a POSTed JSON-RPC message
	rpcID     string
	params    json.RawMessage
}

// recorder wraps the server under test: it records every request and lets
// a test answer instead of the server (intercept returns true when it did).
type recorder struct {
	mu        sync.Mutex
	handler   http.Handler
	reqs      []recorded
	intercept func(w http.ResponseWriter, r *http.Request, rec recorded) bool
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	rec := recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone()}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &env) == nil {
		rec.rpcMethod, rec.rpcID, rec.params = env.Method, string(env.ID), env.Params
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, rec)
	icpt, h := rc.intercept, rc.handler
	rc.mu.Unlock()
	if icpt != nil && icpt(w, r, rec) {
		return
	}
	h.ServeHTTP(w, r)
}

func (rc *recorder) setIntercept(f func(w http.ResponseWriter, r *http.Request, rec recorded) bool) {
	rc.mu.Lock()
	rc.intercept = f
	rc.mu.Unlock()
}

func (rc *recorder) setHandler(h http.Handler) {
	rc.mu.Lock()
	rc.handler = h
	rc.mu.Unlock()
}

func (rc *recorder) all() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recorded(nil), rc.reqs...)
}

// find returns the recorded requests that match.
func (rc *recorder) find(match func(recorded) bool) []recorded {
	var out []recorded
	for _, r := range rc.all() {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

func (rc *recorder) count(httpMethod, rpcMethod string) int {
	return len(rc.find(func(r recorded) bool {
		return r.method == httpMethod && (rpcMethod == "" || r.rpcMethod == rpcMethod)
	}))
}

// remoteServer is one test server.
type remoteServer struct {
	mcp       *server.MCPServer
	rec       *recorder
	srv       *httptest.Server
	url       string // what the config points at
	sse       *server.SSEServer
	cancelled chan string   // the slow tool reports its ctx ending here
	stop      chan struct{} // closed when the test ends: the slow tool returns
}

// checkLeaks checks, once the test and every cleanup registered after it
// are done (test servers included), that no goroutine started since is
// left.
func checkLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// newTestMCPServer builds a server with tools, a prompt, a resource and a
// template. The "slow" tool waits for its ctx (or stop) and reports the end
// on cancelled.
func newTestMCPServer(cancelled chan string, stop chan struct{}) *server.MCPServer {
	s := server.NewMCPServer("remote-test", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithLogging(),
	)
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text."), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Wait until cancelled.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				select {
				case cancelled <- "slow":
				default:
				}
				return nil, ctx.Err()
			case <-stop:
				return nil, errors.New("test over")
			case <-time.After(20 * time.Second):
				return mcp.NewToolResultText("finished"), nil
			}
		})
	s.AddTool(mcp.NewTool("sample", mcp.WithDescription("Ask the client's model.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("say hi")}},
				MaxTokens: 10,
			}})
			if err != nil {
				return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
			}
			text := ""
			if tc, ok := res.Content.(mcp.TextContent); ok {
				text = tc.Text
			}
			return mcp.NewToolResultText("model said: " + text), nil
		})
	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Report progress, then finish.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				_ = s.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": "p1", "progress": i, "total": 3,
				})
			}
			return mcp.NewToolResultText("done"), nil
		})
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greet someone."), mcp.WithArgument("name", mcp.RequiredArgument())),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("greeting", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Hello, "+req.Params.Arguments["name"])),
			}), nil
		})
	s.AddResource(mcp.NewResource("test://static/readme", "readme", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://items/{id}", "item"),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "item"}}, nil
		})
	return s
}

// serveLoopback starts h on 127.0.0.1 only.
func serveLoopback(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv
}

// startRemote starts a streamable HTTP ("http") or SSE ("sse") test server.
// The server is stopped at cleanup (after the test's own deferred calls).
func startRemote(t *testing.T, typ string, opts ...server.StreamableHTTPOption) *remoteServer {
	t.Helper()
	r := &remoteServer{rec: &recorder{}, cancelled: make(chan string, 4), stop: make(chan struct{})}
	r.mcp = newTestMCPServer(r.cancelled, r.stop)
	r.srv = serveLoopback(t, r.rec)
	switch typ {
	case "http":
		r.rec.setHandler(server.NewStreamableHTTPServer(r.mcp, opts...))
		r.url = r.srv.URL + "/mcp"
	case "sse":
		r.sse = server.NewSSEServer(r.mcp)
		r.rec.setHandler(r.sse)
		r.url = r.srv.URL + "/sse"
	default:
		t.Fatalf("unknown type %q", typ)
	}
	t.Cleanup(func() {
		close(r.stop)
		r.srv.CloseClientConnections()
		r.srv.Close()
	})
	return r
}

// requireToken makes the server answer 401 to any request without the test
// token, the way an authenticating gateway would, echoing what it got.
func (r *remoteServer) requireToken() {
	r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
		if req.Header.Get("Authorization") == "Bearer "+testToken {
			return false
		}
		http.Error(w, "invalid credentials: "+req.Header.Get("Authorization"), http.StatusUnauthorized)
		return true
	})
}

// remoteConfig returns the spec of one remote server, parsed from a config
// the way a user writes it (the token comes from ${TOKEN}).
func remoteConfig(t *testing.T, name, typ, url, timeouts string) config.Spec {
	t.Helper()
	if timeouts == "" {
		timeouts = `{"connect": "5s", "list": "5s", "call": "10s"}`
	}
	// Pinned to 2025-11-25: these tests check that revision's wire (the
	// session, initialize and its replay, the GET stream, server-sent
	// requests and log messages); the stateless revision over HTTP has
	// tests of its own (stateless_http_test.go).
	cfg := fmt.Sprintf(`{"mcpServers": {%q: {"type": %q, "url": %q, "protocolVersion": "2025-11-25",
		"headers": {"Authorization": "Bearer ${TOKEN}", "X-Trace": "on"}, "timeouts": %s}}}`,
		name, typ, url, timeouts)
	c, err := config.Parse(strings.NewReader(cfg), func(k string) (string, bool) {
		if k == "TOKEN" {
			return testToken, true
		}
		return "", false
	})
	if err != nil {
		t.Fatalf("parsing the config: %v", err)
	}
	return c.Servers[0]
}

// testHost is a Fleet with its log captured at debug level.
type testHost struct {
	*Fleet
	logs *testkit.Buffer

	mu       sync.Mutex
	notes    []string // method + " " + params of each notification
	requests []string // method of each server->client request
}

func newTestHost(t *testing.T, answer func(method string, params json.RawMessage) (json.RawMessage, error)) *testHost {
	t.Helper()
	th := &testHost{logs: &testkit.Buffer{}}
	logger := slog.New(slog.NewTextHandler(th.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	th.Fleet = NewFleet(&Options{
		Logger:       logger,
		Version:      "test",
		Capabilities: []byte(`{"sampling":{}}`),
		Events: Events{
			Notification: func(server, method string, params json.RawMessage) {
				th.mu.Lock()
				th.notes = append(th.notes, method+" "+string(params))
				th.mu.Unlock()
			},
			Request: func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
				th.mu.Lock()
				th.requests = append(th.requests, method)
				th.mu.Unlock()
				if answer == nil {
					return nil, errors.New("no answer")
				}
				return answer(method, params)
			},
		},
	})
	return th
}

// startOne starts one server on the host, fails the test if it does not
// start, and returns its Client once its first discovery has settled.
func (th *testHost) startOne(t *testing.T, spec config.Spec) *Client {
	t.Helper()
	return startSettled(t, th.Fleet, spec)
}

// startSettled starts spec alone on h, fails the test if it does not start,
// and returns its Client once its first discovery has settled.
func startSettled(t *testing.T, h *Fleet, spec config.Spec) *Client {
	t.Helper()
	if err := h.StartAll(context.Background(), []config.Spec{spec}); err != nil {
		t.Fatalf("StartAll: %v", err)
	}
	c, _ := h.Client(spec.Name)
	<-c.Settled()
	return c
}

func (th *testHost) notifications() []string {
	th.mu.Lock()
	defer th.mu.Unlock()
	return append([]string(nil), th.notes...)
}

func (th *testHost) serverRequests() []string {
	th.mu.Lock()
	defer th.mu.Unlock()
	return append([]string(nil), th.requests...)
}

// closeHost closes the host and checks the token never reached the log.
func (th *testHost) closeHost(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := th.Close(ctx); err != nil {
		t.Errorf("closing the host: %v", err)
	}
	if strings.Contains(th.logs.String(), testToken) {
		t.Errorf("the token appears in the log:\n%s", th.logs.String())
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// callTool calls a tool through the Client and returns the raw result.
func callTool(ctx context.Context, c *Client, name string, args map[string]any) (json.RawMessage, error) {
	if args == nil {
		args = map[string]any{}
	}
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	return c.Call(ctx, "tools/call", params)
}

// toolText returns the text of the first content item of a tool result.
func toolText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("unexpected tool result %s (%v)", raw, err)
	}
	return r.Content[0].Text
}
