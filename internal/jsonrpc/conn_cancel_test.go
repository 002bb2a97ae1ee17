package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// blocker is a handler whose "block" method waits for its ctx to end, then
// returns a result that must never be sent.
type blocker struct {
	started chan struct{}
	ended   chan error // the handler ctx's error
	notes   chan string
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 16), ended: make(chan error, 16), notes: make(chan string, 16)}
}

func (b *blocker) handler() handlerFuncs {
	return handlerFuncs{
		req: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "block" {
				return params, nil
			}
			b.started <- struct{}{}
			<-ctx.Done()
			b.ended <- ctx.Err()
			return json.RawMessage(`"too late"`), nil
		},
		notif: func(method string, _ json.RawMessage) { b.notes <- method },
	}
}

func (b *blocker) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(waitLimit):
		t.Fatal("the peer's handler never started")
	}
}

func (b *blocker) waitEnded(t *testing.T) error {
	t.Helper()
	select {
	case err := <-b.ended:
		return err
	case <-time.After(waitLimit):
		t.Fatal("the peer's handler ctx was never cancelled")
		return nil
	}
}

// requestID finds the id a side used for its (only) request of method.
func requestID(t *testing.T, msgs []wireMsg, method string) json.RawMessage {
	t.Helper()
	var id json.RawMessage
	for _, m := range msgs {
		if m.Method == method && len(m.ID) > 0 {
			if id != nil {
				t.Fatalf("more than one %s request", method)
			}
			id = m.ID
		}
	}
	if id == nil {
		t.Fatalf("no %s request on the stream", method)
	}
	return id
}

// cancellations returns the params of every notifications/cancelled sent.
func cancellations(msgs []wireMsg) []struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason"`
} {
	var out []struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	for _, m := range msgs {
		if m.Method != "notifications/cancelled" {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			p.Reason = "UNPARSEABLE PARAMS"
		}
		if len(m.ID) != 0 {
			p.Reason = "SENT WITH AN ID"
		}
		out = append(out, p)
	}
	return out
}

func assertNoResponse(t *testing.T, msgs []wireMsg, id json.RawMessage) {
	t.Helper()
	for _, m := range msgs {
		if m.Method == "" && bytes.Equal(m.ID, id) {
			t.Errorf("a response was written for cancelled request %s: result=%s error=%v", id, m.Result, m.Error)
		}
	}
}

// assertBlockCancelled checks the streams of a closed pair: a sent one
// notifications/cancelled, with reason, for its block request, and b wrote no
// response to that request.
func assertBlockCancelled(t *testing.T, p *pair, reason string) {
	t.Helper()
	aMsgs := frames(t, p.aOut.bytes())
	id := requestID(t, aMsgs, "block")
	cs := cancellations(aMsgs)
	if len(cs) != 1 || !bytes.Equal(cs[0].RequestID, id) || cs[0].Reason != reason {
		t.Errorf("cancellations sent = %+v, want one for request %s with reason %q", cs, id, reason)
	}
	assertNoResponse(t, frames(t, p.bOut.bytes()), id)
}

func TestCallerCancelCancelsPeerHandler(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := goCall(p.a, ctx, "block", json.RawMessage(`{"q":1}`))
	blk.waitStarted(t)
	cancelledAt := time.Now()
	cancel()

	r := waitCall(t, call)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Call = %s, %v; want context.Canceled", r.res, r.err)
	}
	if r.res != nil {
		t.Errorf("cancelled Call returned a result %s", r.res)
	}
	if d := r.at.Sub(cancelledAt); d > 2*time.Second {
		t.Errorf("Call took %v to return after cancellation", d)
	}
	if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
		t.Errorf("peer handler ctx ended with %v, want context.Canceled", err)
	}

	// The connection is still usable in both directions.
	ctx2 := testCtx(t)
	if got, err := p.a.Call(ctx2, "ping", json.RawMessage(`[1]`)); err != nil || string(got) != `[1]` {
		t.Fatalf("Call after a cancellation = %s, %v", got, err)
	}
	if got, err := p.b.Call(ctx2, "ping", json.RawMessage(`[2]`)); err != nil || string(got) != `[2]` {
		t.Fatalf("reverse Call after a cancellation = %s, %v", got, err)
	}

	// Everything is written once both Serves (and so every handler) are done.
	p.close()
	assertBlockCancelled(t, p, "cancelled")

	// notifications/cancelled is consumed by the Conn, not handed on.
	close(blk.notes)
	for n := range blk.notes {
		t.Errorf("handler received notification %q", n)
	}
}

func TestCallerDeadlineSaysTimedOut(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := waitCall(t, goCall(p.a, ctx, "block", nil))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("Call = %s, %v; want context.DeadlineExceeded", r.res, r.err)
	}
	if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
		t.Errorf("peer handler ctx ended with %v, want context.Canceled", err)
	}

	p.close()
	assertBlockCancelled(t, p, "timed out")
}

// CallWithin's own bound ends the call as a context deadline would: the
// peer is told it timed out, the error is context.DeadlineExceeded, and the
// timer, back in its pool, never ends a later call early.
func TestCallWithinTimesOut(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	res, err := p.a.CallWithin(context.Background(), 100*time.Millisecond, "block", nil)
	if !errors.Is(err, ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CallWithin = %s, %v; want ErrTimedOut", res, err)
	}
	if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
		t.Errorf("peer handler ctx ended with %v, want context.Canceled", err)
	}
	for i := range 50 { // each takes a timer from the pool
		if got, err := p.a.CallWithin(testCtx(t), time.Minute, "ping", json.RawMessage(`1`)); err != nil || string(got) != `1` {
			t.Fatalf("CallWithin #%d afterwards = %s, %v", i, got, err)
		}
	}
	p.close()
	assertBlockCancelled(t, p, "timed out")
}

func TestCallWithDoneContext(t *testing.T) {
	leakCheck(t)
	p := newPair(t, echo, echo, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Either outcome is acceptable for an already-cancelled ctx as long as
	// Call returns; a cancellation then follows the request on the wire.
	_, err := p.a.Call(ctx, "ping", nil)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a done ctx = %v", err)
	}
	if got, err := p.a.Call(testCtx(t), "ping", json.RawMessage(`1`)); err != nil || string(got) != `1` {
		t.Errorf("Call afterwards = %s, %v", got, err)
	}
}

// The peer cancelling one of our handlers: driven from the raw stream so the
// absence of a response can be checked line by line.
func TestPeerCancellationFromRawStream(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newRawPeer(t, blk.handler(), nil)

	for _, id := range []string{`5`, `"abc"`} {
		// Whitespace around the id does not affect matching.
		p.send(`{"jsonrpc":"2.0","id" :  ` + id + ` ,"method":"block"}`)
		blk.waitStarted(t)
		// Cancellations for other ids, or without a usable id, change nothing.
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"junk"}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)
		p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"still":"blocked"}}`)
		p.expectLine(`{"jsonrpc":"2.0","id":1,"result":{"still":"blocked"}}`)
		select {
		case err := <-blk.ended:
			t.Fatalf("handler %s ended (%v) on a cancellation for another request", id, err)
		default:
		}

		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{ "requestId":	` + id + ` , "reason":"user"}}`)
		if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
			t.Errorf("handler ctx ended with %v", err)
		}
		// The next line written is the answer to a later request, not a
		// response to the cancelled one.
		p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":"next"}`)
		p.expectLine(`{"jsonrpc":"2.0","id":2,"result":"next"}`)
	}
	if err := p.close(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	for _, line := range p.rest() {
		t.Errorf("unexpected line after cancellation: %q", line)
	}
	close(blk.notes)
	for n := range blk.notes {
		t.Errorf("handler received notification %q", n)
	}
}
