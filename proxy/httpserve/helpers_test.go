package httpserve

import (
	"bufio"
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
// request with an empty result, except what its respond says otherwise.
// When its context ends it answers what it left unanswered with the error
// "context canceled", as a proxy.Server's cancelled calls do.
type fakeServer struct {
	in      io.Reader
	out     io.Writer
	respond respondFunc
}

// respondFunc handles one request; it writes to w what the server sends
// (whole lines) and returns false to leave the request unanswered.
type respondFunc func(w io.Writer, env jsonrpc.Envelope) bool

func (f *fakeServer) Run(ctx context.Context) error {
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(f.in)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	var unanswered []string
	for {
		select {
		case <-ctx.Done():
			for _, id := range unanswered {
				_, _ = io.WriteString(f.out, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"context canceled"}}`+"\n")
			}
			go func() { // until the session closes the pipe
				for range lines {
				}
			}()
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			env, err := jsonrpc.PeekEnvelope(line)
			if err != nil || !env.IsRequest() {
				continue
			}
			if f.respond == nil || f.respond(f.out, env) {
				_, _ = io.WriteString(f.out, `{"jsonrpc":"2.0","id":`+string(env.ID)+`,"result":{}}`+"\n")
			} else {
				unanswered = append(unanswered, string(env.ID))
			}
		}
	}
}

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
	h := newHandler(nil, func(in io.Reader, out io.Writer, _ *proxy.SessionOptions) runner {
		return &fakeServer{in: in, out: out, respond: respond}
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
