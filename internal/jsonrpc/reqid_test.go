package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestRequestIDInHandler: the handler sees the request's id byte for byte,
// string or number, in the Request it is given, and its ctx carries no
// value.
func TestRequestIDInHandler(t *testing.T) {
	leakCheck(t)
	if ch := (Request{}).Answered(); ch != nil {
		t.Error("a Request no Conn made has an answered channel")
	}
	h := handlerFuncs{whole: func(ctx context.Context, req Request) (json.RawMessage, error) {
		if ctx.Value(struct{}{}) != nil {
			return nil, errors.New("the handler's ctx carries a value")
		}
		id := req.ID
		if id == nil {
			return json.RawMessage(`"none"`), nil
		}
		quoted, _ := json.Marshal(string(id))
		return quoted, nil
	}}
	p := newRawPeer(t, h, nil)
	for _, id := range []string{`7`, `"listen-1"`, `12345678901234567890`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"m"}`)
		var m wireMsg
		if err := json.Unmarshal(p.readLine(), &m); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := json.Unmarshal(m.Result, &got); err != nil || got != id {
			t.Errorf("id %s: the handler saw %s (%v)", id, m.Result, err)
		}
	}
	if err := p.close(); err != nil {
		t.Error(err)
	}
}

// A handler's context is its request: one allocation, where a context
// value around context.WithCancel made it four.
func TestHandlerContextAllocations(t *testing.T) {
	c := NewConn(NewLineReader(strings.NewReader("")), NewLineWriter(io.Discard), echo, nil)
	id := json.RawMessage(`7`)
	n := testing.AllocsPerRun(100, func() {
		c.newInflight(id).cancel()
	})
	if n > 1 {
		t.Errorf("newInflight: %v allocations, want <= 1", n)
	}
}

// The handler's ctx behaves as a cancellable context: Done and Err before
// and after cancel, contexts derived from it (values, timeouts,
// AfterFunc) end with it and see its cause, a stopped AfterFunc never
// runs, and Answered's channel closes once the request is answered,
// whether asked for before or after.
func TestHandlerContextIsTheRequest(t *testing.T) {
	c := NewConn(NewLineReader(strings.NewReader("")), NewLineWriter(io.Discard), echo, nil)
	req := c.newInflight(json.RawMessage(`"a"`))
	var ctx context.Context = req
	if ctx.Err() != nil {
		t.Fatalf("Err before cancel: %v", ctx.Err())
	}
	if _, ok := ctx.Deadline(); ok {
		t.Error("a request has a deadline")
	}
	type key struct{}
	valued := context.WithValue(ctx, key{}, "inner")
	child, stop := context.WithTimeout(valued, time.Hour)
	defer stop()
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	stopped := context.AfterFunc(ctx, func() { t.Error("a stopped AfterFunc ran") })
	if !stopped() {
		t.Error("stopping an AfterFunc before cancel reported false")
	}
	early := Request{inflight: req}.Answered()
	select {
	case <-early:
		t.Fatal("answered before its handler returned")
	case <-ctx.Done():
		t.Fatal("done before cancel")
	default:
	}
	req.cancel()
	req.cancel() // a second cancel does nothing
	for what, ch := range map[string]<-chan struct{}{"the request": ctx.Done(), "a derived context": child.Done(), "an AfterFunc": ran} {
		select {
		case <-ch:
		case <-time.After(waitLimit):
			t.Fatalf("%s did not end with the request", what)
		}
	}
	if !errors.Is(context.Cause(child), context.Canceled) || !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
		t.Errorf("cause %v, err %v, child's err %v, want context.Canceled", context.Cause(child), ctx.Err(), child.Err())
	}
	if child.Value(key{}) != "inner" {
		t.Errorf("a derived context lost its value: %v", child.Value(key{}))
	}
	late, lateStop := context.WithCancel(ctx)
	defer lateStop()
	select {
	case <-late.Done():
	default:
		t.Error("a context derived after cancel is not done")
	}
	req.markAnswered()
	for _, ch := range []<-chan struct{}{early, (Request{inflight: req}).Answered()} {
		select {
		case <-ch:
		default:
			t.Error("Answered's channel is open after the answer")
		}
	}
}

// A request whose handler is still running when the connection ends is
// cancelled: its ctx ends, and a context derived from it too.
func TestHandlerContextEndsWithTheConnection(t *testing.T) {
	leakCheck(t)
	started := make(chan context.Context, 1)
	h := handlerFuncs{req: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		child, stop := context.WithTimeout(ctx, time.Hour)
		defer stop()
		started <- child
		<-child.Done()
		return nil, child.Err()
	}}
	p := newRawPeer(t, h, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	var child context.Context
	select {
	case child = <-started:
	case <-time.After(waitLimit):
		t.Fatal("the handler never ran")
	}
	if err := p.close(); err != nil {
		t.Error(err)
	}
	if !errors.Is(child.Err(), context.Canceled) {
		t.Errorf("a derived context after the connection ended: %v, want context.Canceled", child.Err())
	}
}

// Two requests in flight under one id (which a peer must not send, and
// may): both are cancelled when the connection ends, so that Serve, which
// waits for every handler, returns.
func TestDuplicateIDsEndWithTheConnection(t *testing.T) {
	leakCheck(t)
	started := make(chan struct{}, 2)
	ended := make(chan error, 2)
	h := handlerFuncs{req: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}}
	p := newRawPeer(t, h, nil)
	for range 2 {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
		select {
		case <-started:
		case <-time.After(waitLimit):
			t.Fatal("a handler never ran")
		}
	}
	if err := p.close(); err != nil {
		t.Error(err)
	}
	for range 2 {
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("a handler ended with %v, want context.Canceled", err)
		}
	}
}
