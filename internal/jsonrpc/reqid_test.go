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
// string or number, and a ctx of its own has none.
func TestRequestIDInHandler(t *testing.T) {
	leakCheck(t)
	if id := RequestID(context.Background()); id != nil {
		t.Errorf("RequestID of a plain ctx = %s, want nil", id)
	}
	h := handlerFuncs{req: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		id := RequestID(ctx)
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

// A handler's context is its request: three allocations (the request,
// its cancellable context, the cancel func), where a context value of its
// own once made it four, and the answered channel, made only for a handler
// that asks for it, five.
func TestHandlerContextAllocations(t *testing.T) {
	c := NewConn(strings.NewReader(""), io.Discard, echo, nil)
	n := testing.AllocsPerRun(100, func() {
		c.newInflight(context.Background(), json.RawMessage(`7`)).cancel()
	})
	if n > 3 {
		t.Errorf("newInflight: %v allocations, want <= 3", n)
	}
	req := c.newInflight(context.Background(), json.RawMessage(`7`))
	defer req.cancel()
	var ctx context.Context = req
	if string(RequestID(ctx)) != "7" {
		t.Errorf("RequestID %s, want 7", RequestID(ctx))
	}
	if RequestID(context.Background()) != nil || Answered(context.Background()) != nil {
		t.Error("a context of no request has an id or an answered channel")
	}
}

// The handler's ctx behaves as the cancellable context it wraps: a context
// derived from it ends with it and sees its cause, its values reach past
// it, and Answered's channel closes once the request is answered, whether
// asked for before or after.
func TestHandlerContextIsTheRequest(t *testing.T) {
	c := NewConn(strings.NewReader(""), io.Discard, echo, nil)
	type key struct{}
	base := context.WithValue(context.Background(), key{}, "outer")
	req := c.newInflight(base, json.RawMessage(`"a"`))
	var ctx context.Context = req
	if got := ctx.Value(key{}); got != "outer" {
		t.Errorf("a value of the parent: %v, want outer", got)
	}
	child, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	early := Answered(child)
	select {
	case <-early:
		t.Fatal("answered before its handler returned")
	default:
	}
	req.cancel()
	select {
	case <-child.Done():
	case <-time.After(waitLimit):
		t.Fatal("a derived context did not end with the request's")
	}
	if !errors.Is(context.Cause(child), context.Canceled) || !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("cause %v, err %v, want context.Canceled", context.Cause(child), ctx.Err())
	}
	req.markAnswered()
	for _, ch := range []<-chan struct{}{early, Answered(ctx)} {
		select {
		case <-ch:
		default:
			t.Error("Answered's channel is open after the answer")
		}
	}
}
