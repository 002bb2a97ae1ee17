package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// nextKept returns the first message s kept that contains want, skipping
// others, without waiting for one.
func nextKept(t *testing.T, s testkit.LabelSink, want string) string {
	t.Helper()
	for {
		select {
		case m := <-s:
			if strings.Contains(m[1], want) {
				return m[1]
			}
		default:
			t.Fatalf("no message with %s was written", want)
		}
	}
}

// Session.Close cancels what the session is handling and returns once
// its handlers have: the cancelled call's answer is written by then, the
// session takes no more messages, and Run has returned; nothing of the
// session's is left running.
func TestSessionCloseWaitsForItsHandlers(t *testing.T) {
	entered := make(chan struct{}, 1)
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("wait", "")}}
	srv.Handle = func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	set := memserver.Set{"notes": srv}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	tr := New(memConfig(t, set, nil, nil), &Options{Dial: func(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) { return set.Dial(spec, h) }})
	t.Cleanup(func() { _ = tr.Close(context.Background()) })
	leaks := goleak.IgnoreCurrent()

	out := make(testkit.LabelSink, 64)
	s := tr.Attach(nil, out, &SessionOptions{ID: "s1"})
	ran := make(chan error, 1)
	go func() { ran <- s.Run(context.Background()) }()
	deliver := func(msg string) {
		t.Helper()
		if err := s.Deliver([]byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// Answered on a handler goroutine: wait for it as a host would.
	deliver(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	for m := range out {
		if strings.Contains(m[1], `"id":"init"`) {
			break
		}
	}
	deliver(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deliver(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"mcp__notes__wait","arguments":{}}}`)
	<-entered

	s.Close()
	if got := nextKept(t, out, `"id":"call"`); !strings.Contains(got, `"error"`) && !strings.Contains(got, `"isError":true`) {
		t.Errorf("the answer of the call Close cancelled: %s", got)
	}
	if err := s.Deliver([]byte(`{"jsonrpc":"2.0","id":"late","method":"ping"}`)); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Deliver after Close: %v, want jsonrpc.ErrClosed", err)
	}
	if err := <-ran; err != nil {
		t.Errorf("Run: %v", err)
	}
	// The trunk's own goroutines (the server's connection, its cancelled
	// handler) are Close's of the trunk to end; the session's are gone.
	_ = tr.Close(context.Background())
	verifyNoLeaks(t, leaks, srv)
}
