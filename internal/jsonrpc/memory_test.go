package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// Two in-memory ends call each other, a handler on one end's read loop
// writes to the other without a deadlock, a cancelled call reaches the
// peer's handler, and Close ends both ends with no goroutine left.
func TestInMemory(t *testing.T) {
	leakCheck(t)
	ctx := testCtx(t)
	notified := make(chan string, 1)
	cancelled := make(chan struct{})
	var a, b *InMemory
	a, b = NewInMemory(handlerFuncs{
		notif: func(method string, _ json.RawMessage) {
			// On a's read loop: a write back must not wait for b's reader.
			_ = a.Notify("notifications/pong", nil)
		},
	}, handlerFuncs{
		req: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			switch method {
			case "echo":
				return params, nil
			case "block":
				<-ctx.Done()
				close(cancelled)
				return nil, ctx.Err()
			}
			return nil, Errorf(CodeMethodNotFound, "no %s", method)
		},
		notif: func(method string, _ json.RawMessage) { notified <- method },
	}, nil)

	got, err := a.Call(ctx, "echo", json.RawMessage(`{"x":[1,2]}`))
	if err != nil || string(got) != `{"x":[1,2]}` {
		t.Fatalf("echo: %s, %v", got, err)
	}
	if _, err := a.Call(ctx, "nothing", nil); !errors.As(err, new(*Error)) {
		t.Errorf("an unknown method: %v, want the peer's *Error", err)
	}
	if err := b.Notify("notifications/ping", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-notified:
		if m != "notifications/pong" {
			t.Errorf("b was notified of %q", m)
		}
	case <-ctx.Done():
		t.Fatal("no notification came back")
	}

	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := a.Call(callCtx, "block", nil); done <- err }()
	cancel()
	waitClosed(t, cancelled, "the peer's handler to see the cancellation")
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call: %v", err)
	}

	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, b.Done(), "the peer to see the end")
	if _, err := b.Call(ctx, "echo", nil); err == nil {
		t.Error("a call after Close succeeded")
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
