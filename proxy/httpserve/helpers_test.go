package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// testRouterConfig is a router without budgets worth the name.
func testRouterConfig() routerConfig {
	return routerConfig{streamBytes: 1 << 40, sessionBytes: 1 << 40}
}

// A fakeServer stands in for a session's proxy.Session: it answers every
// request with an empty result, except what its respond says otherwise,
// on the goroutine that hands it the request, and never waits. When its Run's context ends
// it answers what it left unanswered with the error "context canceled",
// as a proxy.Session's cancelled calls do.
type fakeServer struct {
	out     jsonrpc.MessageWriter
	respond respondFunc

	mu         sync.Mutex // one message at a time, as a connection's read loop takes them
	unanswered []string
	closeOnce  sync.Once
	closed     chan struct{}
}

// respondFunc handles one request; it writes to w what the server sends
// (whole lines, each one message) and returns false to leave the request
// unanswered.
type respondFunc func(w io.Writer, env jsonrpc.Envelope) bool

func newFakeServer(out jsonrpc.MessageWriter, respond respondFunc) *fakeServer {
	return &fakeServer{out: out, respond: respond, closed: make(chan struct{})}
}

// Write passes each line of p on as one message.
func (f *fakeServer) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if err := f.out.WriteMessage(line); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

// handle takes one message.
func (f *fakeServer) handle(msg []byte) error {
	select {
	case <-f.closed:
		return jsonrpc.ErrClosed
	default:
	}
	env, err := jsonrpc.PeekEnvelope(msg)
	if err != nil || !env.IsRequest() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.respond == nil || f.respond(f, env) {
		_, _ = io.WriteString(f, `{"jsonrpc":"2.0","id":`+string(env.ID)+`,"result":{}}`+"\n")
		return nil
	}
	f.unanswered = append(f.unanswered, string(env.ID))
	return nil
}

func (f *fakeServer) Deliver(msg []byte) error { return f.handle(msg) }

// Answer is Deliver: a request left unanswered returns at once, which the
// exchange takes as a session does whose answer is still to come.
func (f *fakeServer) Answer(_ context.Context, msg []byte) error { return f.handle(msg) }

func (f *fakeServer) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		f.cancelAll()
		return ctx.Err()
	case <-f.closed:
		return nil
	}
}

// cancelAll answers what was left unanswered with "context canceled".
func (f *fakeServer) cancelAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range f.unanswered {
		_ = f.out.WriteMessage([]byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"context canceled"}}`))
	}
	f.unanswered = nil
}

func (f *fakeServer) Close() { f.closeOnce.Do(func() { close(f.closed) }) }

// testHandler is a Handler whose sessions are fake servers, served on
// loopback until the test ends.
type testHandler struct {
	*Handler
	t      *testing.T
	url    string
	client *http.Client
}

func newTestHandler(t *testing.T, opts Options, respond respondFunc) *testHandler {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	h := newHandler(nil, func(out jsonrpc.MessageWriter, _ *proxy.SessionOptions) runner {
		return newFakeServer(out, respond)
	}, opts)
	srv := httptest.NewServer(h)
	transport := &http.Transport{}
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		transport.CloseIdleConnections()
	})
	return &testHandler{Handler: h, t: t, url: srv.URL + DefaultPath, client: &http.Client{Transport: transport}}
}

// post sends one message, in a session when session is not "", taking
// the answer as accept says ("" for both JSON and SSE).
func (th *testHandler) post(ctx context.Context, session, accept, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, th.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if accept == "" {
		accept = "application/json, text/event-stream"
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return th.client.Do(req)
}

// call posts and reads the whole answer.
func (th *testHandler) call(session, accept, body string) (status int, answer string) {
	th.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := th.post(ctx, session, accept, body)
	if err != nil {
		th.t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		th.t.Fatalf("reading the answer to %s: %v", body, err)
	}
	return resp.StatusCode, string(b)
}

// initialize opens a session and returns its id.
func (th *testHandler) initialize() string {
	th.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := th.post(ctx, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if err != nil {
		th.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		th.t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, id)
	}
	return id
}

// sessionCount is how many sessions are open.
func (h *Handler) sessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// waitFor polls cond, a state that changes once, for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rpcErrorOf decodes a JSON-RPC error answer.
func rpcErrorOf(t *testing.T, answer string) (id json.RawMessage, code int, message string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(answer)), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %q", answer)
	}
	return m.ID, m.Error.Code, m.Error.Message
}

// hangs is a respondFunc that never answers the method "hang", and says
// on got when it received one.
func hangs(got chan<- string) respondFunc {
	var mu sync.Mutex
	return func(_ io.Writer, env jsonrpc.Envelope) bool {
		if env.Method != "hang" {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		got <- string(env.ID)
		return false
	}
}
