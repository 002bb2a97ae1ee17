package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWireFormat(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, echo, nil)
	ctx := testCtx(t)

	call := goCall(p.c, ctx, "tools/list", nil)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	if r := waitCall(t, call); r.err != nil || string(r.res) != `{"tools":[]}` {
		t.Errorf("Call = %s, %v", r.res, r.err)
	}

	call = goCall(p.c, ctx, "tools/call", json.RawMessage(`{"name":"x","arguments":{"n":12345678901234567890}}`))
	p.expectLine(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890}}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"nope","data":{"why":"\u00e9"}}}`)
	r := waitCall(t, call)
	var rpcErr *Error
	if !errors.As(r.err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Message != "nope" || string(rpcErr.Data) != `{"why":"\u00e9"}` {
		t.Errorf("Call = %s, %v", r.res, r.err)
	}

	if err := p.c.Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	p.expectLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err := p.c.Notify("notifications/message", json.RawMessage(`{"level":"info"}`)); err != nil {
		t.Fatal(err)
	}
	p.expectLine(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`)

	// A method name needing escapes still makes valid JSON that round-trips.
	odd := "we\"ird\\name/ü\n\x01"
	if err := p.c.Notify(odd, nil); err != nil {
		t.Fatal(err)
	}
	var m wireMsg
	line := p.readLine()
	if err := json.Unmarshal(line, &m); err != nil || m.Method != odd || bytes.Count(line, []byte("\n")) != 1 {
		t.Errorf("odd method name framed as %q (%v)", line, err)
	}

	// Requests from the peer are answered with the id verbatim.
	p.send(`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":[1,2]}}`)
	p.expectLine(`{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"nothing"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":8,"result":{}}`)
}

func TestStringAndOddIDsAreEchoedVerbatim(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == "fail" {
			return nil, Errorf(CodeInvalidParams, "bad")
		}
		return params, nil
	}}
	p := newRawPeer(t, hb, nil)
	for _, id := range []string{`"abc"`, `"1"`, `""`, `"caf\u00e9 \"q\""`, `12345678901234567890`, `-3`, `0`, `1.5`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{"k":"v"}}`)
		p.expectLine(`{"jsonrpc":"2.0","id":` + id + `,"result":{"k":"v"}}`)
		p.send(`{"jsonrpc":"2.0", "id" : ` + id + ` , "method":"fail"}`)
		p.expectLine(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"bad"}}`)
	}
}

func TestLargeSingleLineResult(t *testing.T) {
	leakCheck(t)
	const size = 20 << 20
	var b strings.Builder
	b.Grow(size + 64)
	b.WriteString(`{"blob":"`)
	chunk := `abc\u00e9\"<&>\\xyz 0123456789 `
	for b.Len() < size {
		b.WriteString(chunk)
	}
	b.WriteString(`","n":12345678901234567890}`)
	big := json.RawMessage(b.String())

	var gotParams atomic.Int64
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "big" {
			return params, nil
		}
		gotParams.Store(int64(len(params)))
		if !bytes.Equal(params, big) {
			return nil, errors.New("params changed")
		}
		return big, nil
	}}
	p := newPair(t, echo, hb, nil)
	// 40 MB through the race detector: about 10 s alone at load 20 on 2
	// cores, so waitLimit is too short here.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := p.a.Call(ctx, "big", big)
	if err != nil {
		t.Fatalf("Call: %v (handler saw %d bytes of %d)", err, gotParams.Load(), len(big))
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("20 MB result changed: got %d bytes, want %d", len(got), len(big))
	}
	// Still framed: a small call after the big one works.
	if got, err := p.a.Call(testCtx(t), "small", json.RawMessage(`1`)); err != nil || string(got) != "1" {
		t.Errorf("Call after the big one = %s, %v", got, err)
	}
}

func TestPrettyPrintedRawIsCompacted(t *testing.T) {
	leakCheck(t)
	pretty := "{\n  \"a\": [\n    1,\n    2\n  ],\r\n  \"s\": \"x y\\n\",\n  \"n\": 12345678901234567890,\n  \"h\": \"<&>\"\n}\n"
	const compact = `{"a":[1,2],"s":"x y\n","n":12345678901234567890,"h":"<&>"}`
	var gotParams atomic.Value
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		gotParams.Store(string(params))
		return json.RawMessage(pretty), nil
	}}
	var notes []string
	var mu sync.Mutex
	ha := handlerFuncs{notif: func(_ string, params json.RawMessage) {
		mu.Lock()
		notes = append(notes, string(params))
		mu.Unlock()
	}}
	p := newPair(t, ha, hb, nil)
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		got, err := p.a.Call(ctx, "pretty", json.RawMessage(pretty))
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if string(got) != compact {
			t.Errorf("result = %q, want %q", got, compact)
		}
		if s, _ := gotParams.Load().(string); s != compact {
			t.Errorf("params = %q, want %q", s, compact)
		}
	}
	if err := p.b.Notify("n", json.RawMessage(pretty)); err != nil {
		t.Fatal(err)
	}
	p.close()
	mu.Lock()
	if len(notes) != 1 || notes[0] != compact {
		t.Errorf("notification params = %q, want [%q]", notes, compact)
	}
	mu.Unlock()
	// One message per line on both streams (frames fails otherwise).
	if a := frames(t, p.aOut.bytes()); len(a) != 3 {
		t.Errorf("a wrote %d lines, want 3", len(a))
	}
	if b := frames(t, p.bOut.bytes()); len(b) != 4 {
		t.Errorf("b wrote %d lines, want 4", len(b))
	}
}

// A handler that returns multi-line bytes that are not JSON cannot break the
// framing: the value is replaced by null.
func TestInvalidMultiLineResultKeepsFraming(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage("{\n\"a\": oops\n}"), nil
	}}
	p := newPair(t, echo, hb, nil)
	got, err := p.a.Call(testCtx(t), "x", nil)
	if err != nil || string(got) != "null" {
		t.Errorf("Call = %q, %v; want null", got, err)
	}
	if got, err := p.a.Call(testCtx(t), "x", nil); err != nil || string(got) != "null" {
		t.Errorf("second Call = %q, %v; want null", got, err)
	}
}

// chunkWriter passes each Write on in small pieces, yielding between them,
// as a write to a real pipe or socket may be split. Concurrent unsynchronised
// writers would interleave their frames.
type chunkWriter struct{ w io.Writer }

func (c chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), 4096)
		m, err := c.w.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
		runtime.Gosched()
	}
	return written, nil
}

// Writes to the stream never interleave, even with many writers, large
// frames and a writer that splits them.
func TestConcurrentWritesAreWholeFrames(t *testing.T) {
	leakCheck(t)
	var count, bad atomic.Int32
	const senders, each = 10, 20
	done := make(chan struct{})
	hb := handlerFuncs{notif: func(method string, params json.RawMessage) {
		if method != "n" || len(params) != 70_000+len(`""`) {
			bad.Add(1)
		}
		if count.Add(1) == senders*each {
			close(done)
		}
	}}
	p := newPairWrapped(t, echo, hb, nil, func(w io.Writer) io.Writer { return chunkWriter{w} })
	payload := json.RawMessage(`"` + strings.Repeat("p", 70_000) + `"`)
	var wg sync.WaitGroup
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				if err := p.a.Notify("n", payload); err != nil {
					t.Errorf("Notify: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	waitClosed(t, done, "every notification")
	if n := bad.Load(); n > 0 {
		t.Errorf("%d notifications arrived truncated or merged", n)
	}
	p.close()
	if n := len(frames(t, p.aOut.bytes())); n != senders*each {
		t.Errorf("%d frames on the wire, want %d", n, senders*each)
	}
}
