package jsonrpc

import (
	"context"
	"encoding/json"
	"testing"
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

// A handler's context costs three allocations (its one value, the
// cancellable context and its cancel func): the request's id and its
// answered channel once were two values, the id boxed on its own.
func TestHandlerContextAllocations(t *testing.T) {
	req := &inflightRequest{id: json.RawMessage(`7`), answered: make(chan struct{})}
	n := testing.AllocsPerRun(100, func() {
		_, cancel := handlerContext(context.Background(), req)
		cancel()
	})
	if n > 3 {
		t.Errorf("handlerContext: %v allocations, want <= 3", n)
	}
	ctx, cancel := handlerContext(context.Background(), req)
	defer cancel()
	if string(RequestID(ctx)) != "7" || Answered(ctx) != req.answered {
		t.Errorf("RequestID %s, Answered %v", RequestID(ctx), Answered(ctx))
	}
	if RequestID(context.Background()) != nil || Answered(context.Background()) != nil {
		t.Error("a context of no request has an id or an answered channel")
	}
}
