package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Many hosts share one `serve --http` trunk and one instance of each
// upstream, and nothing of one session reaches another: progress (every
// session uses the same token), log messages at each session's own level,
// sampling and elicitation answered by the session whose call asked,
// resource updates to the subscribers only, a cancellation in one session
// leaving the others' calls alone. Two upstreams: go-sdk's conformance
// server pinned to 2025-11-25 (its requests to the host are real
// requests, routed by the rule for that revision) and pinned to 2026-07-28
// (its requests come back inside the call's result, so the session is
// known exactly). Sessions mix go-sdk clients at both revisions and raw
// stateless HTTP clients.
func TestHTTPSharedSessions(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 20} {
		t.Run(fmt.Sprintf("%d sessions", n), func(t *testing.T) {
			t.Parallel()
			testSharedSessions(t, n)
		})
	}
}

// sharedSession is what one host saw.
type sharedSession struct {
	i        int
	revision string
	level    string // the log level it asked for ("" for a stateless host)

	mu       sync.Mutex
	progress map[string][]float64 // token -> progress values seen
	logs     []string             // "<level> <logger>"
	updated  []string
	asked    []string // sampling and elicitation requests it was sent
	cancelAt chan struct{}
	cs       *mcp.ClientSession
}

func (s *sharedSession) updates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updated)
}

func (s *sharedSession) name() string { return fmt.Sprintf("host-%d", s.i) }

func (s *sharedSession) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.mu.Lock()
			defer s.mu.Unlock()
			tok := fmt.Sprint(req.Params.ProgressToken)
			s.progress[tok] = append(s.progress[tok], req.Params.Progress)
			if tok == "cancel-me" && s.cancelAt != nil {
				close(s.cancelAt)
				s.cancelAt = nil
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			s.mu.Lock()
			s.logs = append(s.logs, string(req.Params.Level)+" "+req.Params.Logger)
			s.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			s.mu.Lock()
			s.updated = append(s.updated, req.Params.URI)
			s.mu.Unlock()
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			s.mu.Lock()
			s.asked = append(s.asked, "sampling")
			s.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "answer from " + s.name()}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			s.mu.Lock()
			s.asked = append(s.asked, "elicitation")
			s.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": s.name(), "username": s.name()}}, nil
		},
	}
}

func (s *sharedSession) progressFor(token string) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.progress[token]...)
}

func testSharedSessions(t *testing.T, n int) {
	ctx := testCtx(t, 4*time.Minute)
	cfg := writeConfig(t, map[string]server{
		"rev2025": pin2025(server{"command": conformanceBin(t)}),
		"modern":  pinStateless(server{"command": conformanceBin(t)}),
	}, nil)
	trunk := startHTTPTrunk(t, ctx, cfg)

	// A sampling or logging call on the 2025 server runs alone there: its
	// request and log lines say not which call they belong to, so with
	// calls of two sessions open at once they reach nobody
	// (docs/protocol.md). The rule is tested as it stands: the only
	// session with a call on the server is asked, and hears the lines.
	// Other calls on it run concurrently with each other.
	var ask2025 sync.RWMutex
	sessions := make([]*sharedSession, n)
	var wg sync.WaitGroup
	for i := range n {
		s := &sharedSession{i: i, progress: map[string][]float64{}}
		switch i % 3 {
		case 0:
			s.revision, s.level = "2025-11-25", "debug"
		case 1:
			s.revision, s.level = "2025-11-25", "error"
		default:
			s.revision = "2026-07-28"
		}
		sessions[i] = s
		// Every session is connected and at its log level before any
		// call: a session that asked for no level gets every message.
		wg.Go(func() {
			if err := s.connect(ctx, trunk.url); err != nil {
				t.Errorf("%s at %s: %v", s.name(), s.revision, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, s := range sessions {
		wg.Go(func() {
			if err := runSharedSession(ctx, s, &ask2025); err != nil {
				t.Errorf("%s at %s: %v", s.name(), s.revision, err)
			}
		})
	}
	t.Cleanup(func() {
		for _, s := range sessions {
			if s.cs != nil {
				_ = s.cs.Close()
			}
		}
	})
	// Raw stateless clients beside the SDK's: the same token, their own
	// progress on their own exchange.
	for i := range max(1, n/5) {
		wg.Go(func() {
			ask2025.RLock()
			defer ask2025.RUnlock()
			if err := rawStatelessProgress(ctx, trunk.url, fmt.Sprintf("raw-%d", i)); err != nil {
				t.Errorf("raw stateless client %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Subscriptions: half the 2025-era sessions subscribe to the watched
	// resource, which changes every few seconds. Once each subscriber has
	// had two updates, the first has long reached every session it was
	// sent to: the others must have none.
	const watched = "mcptrunk://rev2025/test://watched-resource"
	var subscribers, others []*sharedSession
	for _, s := range sessions {
		switch {
		case s.level != "" && s.i%2 == 0:
			if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}); err != nil {
				t.Fatalf("%s: subscribe: %v", s.name(), err)
			}
			subscribers = append(subscribers, s)
		case s.level != "":
			others = append(others, s)
		}
	}
	for _, s := range subscribers {
		if !waitFor(ctx, 30*time.Second, func() bool { return s.updates() >= 2 }) {
			t.Fatalf("%s subscribed and got %d resources/updated in 30 s, want 2", s.name(), s.updates())
		}
	}
	for _, s := range others {
		if got := s.updates(); got > 0 {
			t.Errorf("%s never subscribed and got %d resources/updated", s.name(), got)
		}
	}
	// Unsubscribing one leaves the others' subscription upstream.
	if len(subscribers) > 1 {
		if err := subscribers[0].cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: watched}); err != nil {
			t.Fatal(err)
		}
		last := subscribers[1]
		had := last.updates()
		if !waitFor(ctx, 30*time.Second, func() bool { return last.updates() >= had+1 }) {
			t.Errorf("%s stopped getting updates when another session unsubscribed", last.name())
		}
	}

	// One process per configured server, however many sessions.
	procs := processes(func(p procInfo) bool { return tagged(trunk.tag)(p) && strings.Contains(p.cmdline, "everything-server") })
	if len(procs) != 2 {
		t.Errorf("%d upstream processes for %d sessions, want 2 (one per server): %v", len(procs), n, procs)
	}
	checkNoRace(t, trunk.stderr)
}

// connect opens the session; it stays open until the test ends.
func (s *sharedSession) connect(ctx context.Context, url string) error {
	client := mcp.NewClient(&mcp.Implementation{Name: s.name(), Version: "0"}, s.options())
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: s.revision})
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	s.cs = cs
	if s.level != "" {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(s.level)}); err != nil {
			return fmt.Errorf("setLevel: %w", err)
		}
	}
	return nil
}

// runSharedSession is one host's calls; the first error ends it.
func runSharedSession(ctx context.Context, s *sharedSession, ask2025 *sync.RWMutex) error {
	cs := s.cs
	call := func(ctx context.Context, name string, args map[string]any, meta mcp.Meta) (string, error) {
		if strings.HasPrefix(name, "mcp__rev2025__") && name != "mcp__rev2025__test_sampling" && name != "mcp__rev2025__test_tool_with_logging" {
			ask2025.RLock()
			defer ask2025.RUnlock()
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return "", fmt.Errorf("%s: tool error %s", name, toolText(res))
		}
		return toolText(res), nil
	}

	// Progress: every session uses the token "same"; each sees its own
	// three notifications and no other session's.
	for _, server := range []string{"rev2025", "modern"} {
		if _, err := call(ctx, "mcp__"+server+"__test_tool_with_progress", nil, mcp.Meta{"progressToken": "same"}); err != nil {
			return err
		}
		// The SDK may run a notification's handler after the call
		// returned: wait for the three, then see that no more came.
		waitFor(ctx, 10*time.Second, func() bool { return len(s.progressFor("same")) >= 3 })
		if got := s.progressFor("same"); len(got) != 3 {
			return fmt.Errorf("progress on %s: got %v for the token, want exactly the 3 of its own call", server, got)
		}
		s.mu.Lock()
		s.progress["same"] = nil
		s.mu.Unlock()
	}

	// Requests to the host: exact through the 2026-07-28 server, at any
	// time; through the 2025 one, one call at a time.
	if out, err := call(ctx, "mcp__modern__test_input_required_result_elicitation", nil, nil); err != nil || out != "Hello, "+s.name()+"!" {
		return fmt.Errorf("elicitation through the 2026 server: %q, %v (want this host's answer)", out, err)
	}
	if out, err := call(ctx, "mcp__modern__test_input_required_result_sampling", nil, nil); err != nil || !strings.Contains(out, "answer from "+s.name()) {
		return fmt.Errorf("sampling through the 2026 server: %q, %v (want this host's answer)", out, err)
	}
	ask2025.Lock()
	out, err := call(ctx, "mcp__rev2025__test_sampling", map[string]any{"prompt": "hello"}, nil)
	ask2025.Unlock()
	if err != nil || !strings.Contains(out, "answer from "+s.name()) {
		return fmt.Errorf("sampling through the 2025 server: %q, %v (want this host's answer)", out, err)
	}
	s.mu.Lock()
	asked := len(s.asked)
	s.mu.Unlock()
	if asked != 3 {
		return fmt.Errorf("the host was asked %d times, want 3 (its own calls' requests only)", asked)
	}

	// Cancellation: this session cancels a call after its first
	// progress; the other sessions' calls, running meanwhile, finish.
	if s.i == 0 {
		s.mu.Lock()
		s.cancelAt = make(chan struct{})
		at := s.cancelAt
		s.mu.Unlock()
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-at:
			case <-ctx.Done():
			}
			cancel()
		}()
		if _, err := call(cctx, "mcp__modern__test_tool_with_progress", nil, mcp.Meta{"progressToken": "cancel-me"}); err == nil || !errors.Is(cctx.Err(), context.Canceled) {
			return fmt.Errorf("the cancelled call: %v (want it cancelled)", err)
		}
		cancel()
	}

	if s.level == "" {
		return nil
	}
	// Log levels: each 2025-era session at its own (set at connect). The
	// server logs at info: a session at debug sees those messages of its
	// own call, one at error none, and neither another session's.
	ask2025.Lock()
	_, err = call(ctx, "mcp__rev2025__test_tool_with_logging", nil, nil)
	ask2025.Unlock()
	if err != nil {
		return err
	}
	logsNow := func() []string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return append([]string(nil), s.logs...)
	}
	if s.level == "debug" {
		// The SDK may run a notification's handler after the call returned.
		waitFor(ctx, 10*time.Second, func() bool { return len(logsNow()) >= 3 })
	}
	logs := logsNow()
	switch s.level {
	case "debug":
		if len(logs) != 3 || logs[0] != "info rev2025" {
			return fmt.Errorf("at debug, log messages %q: want the call's three info messages from rev2025, and no other session's", logs)
		}
	case "error":
		if len(logs) != 0 {
			return fmt.Errorf("at error, log messages %q: want none (the server logs at info)", logs)
		}
	}

	return nil
}

// rawStatelessProgress is a stateless client with no SDK: one POST with
// the revision's _meta and headers, answered as server-sent events that
// carry its own progress (the token every session uses) and the result.
func rawStatelessProgress(ctx context.Context, url, name string) error {
	for _, server := range []string{"modern", "rev2025"} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__%s__test_tool_with_progress","arguments":{},`+
			`"_meta":{"progressToken":"same","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
			`"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"0"}}}}`, server, name)
		msgs, err := postSSE(ctx, url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "mcp__" + server + "__test_tool_with_progress"})
		if err != nil {
			return fmt.Errorf("%s: %w", server, err)
		}
		var progress, results int
		for _, m := range msgs {
			switch {
			case strings.Contains(m, `"notifications/progress"`):
				if !strings.Contains(m, `"progressToken":"same"`) {
					return fmt.Errorf("%s: progress with another token: %s", server, m)
				}
				progress++
			case strings.Contains(m, `"result"`):
				results++
			}
		}
		if progress != 3 || results != 1 {
			return fmt.Errorf("%s: %d progress notifications and %d results, want 3 and 1: %q", server, progress, results, msgs)
		}
	}
	return nil
}
