package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPeerEndingFailsPendingCalls(t *testing.T) {
	leakCheck(t)
	blk := newBlocker()
	p := newPair(t, echo, blk.handler(), nil)

	const pending = 5
	ctx := testCtx(t)
	var calls []<-chan callResult
	for i := 0; i < pending; i++ {
		calls = append(calls, goCall(p.a, ctx, "block", nil))
	}
	for i := 0; i < pending; i++ {
		blk.waitStarted(t)
	}

	// b goes away: a reads EOF.
	p.baW.Close()
	if err := waitServe(t, p.aServe, "a"); err != nil {
		t.Errorf("a's Serve on a clean EOF = %v, want nil", err)
	}
	p.aServe <- nil // for p.close
	for i, ch := range calls {
		r := waitCall(t, ch)
		if !errors.Is(r.err, ErrClosed) || errors.Is(r.err, ErrNotSent) {
			t.Errorf("pending call %d = %s, %v; want ErrClosed, as sent", i, r.res, r.err)
		}
	}
	waitClosed(t, p.a.Done(), "a's Done")
	if err := p.a.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("a.Err() = %v, want ErrClosed", err)
	}

	// A closed Conn fails fast.
	start := time.Now()
	if _, err := p.a.Call(ctx, "ping", nil); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrNotSent) {
		t.Errorf("Call after close = %v, want ErrClosed, not sent", err)
	}
	if err := p.a.Notify("notifications/x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after close = %v, want ErrClosed", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("calls on a closed Conn took %v", d)
	}

	// b is still reading; its handlers are cancelled when its input ends.
	select {
	case <-p.b.Done():
		t.Fatal("b ended before its input did")
	default:
	}
	p.abW.Close()
	for i := 0; i < pending; i++ {
		if err := blk.waitEnded(t); !errors.Is(err, context.Canceled) {
			t.Errorf("b handler ctx ended with %v", err)
		}
	}
	if err := waitServe(t, p.bServe, "b"); err != nil {
		t.Errorf("b's Serve on a clean EOF = %v, want nil", err)
	}
	p.bServe <- nil
	if err := p.b.Err(); !errors.Is(err, ErrClosed) {
		t.Errorf("b.Err() = %v, want ErrClosed", err)
	}
}

// Serve returns only once every handler it started has returned, and those
// handlers see their ctx cancelled when the input ends.
func TestServeWaitsForHandlers(t *testing.T) {
	leakCheck(t)
	const n = 3
	started := make(chan struct{}, n)
	var returned atomic.Int32
	h := handlerFuncs{req: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		time.Sleep(100 * time.Millisecond) // slow to wind down
		returned.Add(1)
		return nil, ctx.Err()
	}}
	p := newRawPeer(t, h, nil)
	for i := 1; i <= n; i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"work"}`, i))
	}
	for i := 0; i < n; i++ {
		select {
		case <-started:
		case <-time.After(waitLimit):
			t.Fatal("handler did not start")
		}
	}
	select {
	case <-p.c.Done():
		t.Fatal("Done closed while the input is open")
	default:
	}
	if err := p.close(); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	if got := returned.Load(); got != n {
		t.Errorf("Serve returned while %d of %d handlers were still running", n-got, n)
	}
	waitClosed(t, p.c.Done(), "Done")
	// Handlers cut short by the end of the input still answer (the write may
	// or may not reach the peer); whatever was written is whole frames.
	for _, line := range p.rest() {
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("partial line written: %q", line)
		}
	}
}

func TestReadErrorEndsConnection(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, echo, nil)
	call := goCall(p.c, testCtx(t), "slow", nil)
	p.readRequest("slow")
	if err := p.c.Err(); err != nil {
		t.Errorf("Err() on an open Conn = %v, want nil", err)
	}

	boom := errors.New("stdout exploded")
	if err := p.closeWith(boom); !errors.Is(err, boom) {
		t.Errorf("Serve = %v, want the read error", err)
	}
	r := waitCall(t, call)
	if !errors.Is(r.err, ErrClosed) {
		t.Errorf("pending call = %v, want ErrClosed", r.err)
	}
	err := p.c.Err()
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "stdout exploded") {
		t.Errorf("Err() = %v, want ErrClosed carrying the read error's text", err)
	}
	if _, err := p.c.Call(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after the end = %v, want ErrClosed", err)
	}
}

func TestLastLineWithoutNewlineIsServed(t *testing.T) {
	leakCheck(t)
	var got []string
	var mu sync.Mutex
	p := newRawPeer(t, handlerFuncs{notif: func(method string, _ json.RawMessage) {
		mu.Lock()
		got = append(got, method)
		mu.Unlock()
	}}, nil)
	if _, err := io.WriteString(p.in, `{"jsonrpc":"2.0","method":"a"}`+"\n"+`{"jsonrpc":"2.0","method":"b"}`); err != nil {
		t.Fatal(err)
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("notifications = %v, want [a b]", got)
	}
}
