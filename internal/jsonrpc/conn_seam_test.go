package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// msgFeed is a MessageReader of the messages a test sends on it; closing
// it is the end of the input.
type msgFeed chan []byte

func (f msgFeed) ReadMessage() ([]byte, error) {
	m, ok := <-f
	if !ok {
		return nil, io.EOF
	}
	return m, nil
}

// msgSink is a MessageWriter that keeps each message whole, as a string.
type msgSink chan string

func (s msgSink) WriteMessage(msg []byte) error {
	s <- string(msg)
	return nil
}

// A Conn over message-level ends reads each message whole and writes each
// whole, without a newline; a message over the read limit is refused as a
// line over it is, and the end of the input ends Serve cleanly.
func TestConnOverMessages(t *testing.T) {
	leakCheck(t)
	h := handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"answered ` + method + `"`), nil
	}}
	in, out := make(msgFeed), make(msgSink, 4)
	conn := NewConn(in, out, h, &Options{AnswerInvalid: true, MaxReadBytes: 100, ReadLimitSetting: "trunk.maxMessageBytes"})
	served := make(chan error, 1)
	go func() { served <- conn.Serve() }()

	in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := <-out; got != `{"jsonrpc":"2.0","id":1,"result":"answered tools/list"}` {
		t.Errorf("answer %q, want the whole message without a newline", got)
	}
	in <- []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + strings.Repeat("x", 200) + `"}}`)
	if got := <-out; !strings.Contains(got, `"id":2`) || !strings.Contains(got, `-32600`) || !strings.Contains(got, "trunk.maxMessageBytes") {
		t.Errorf("answer to a message over the read limit: %s", got)
	}
	close(in)
	if err := <-served; err != nil {
		t.Errorf("Serve after the input ended: %v", err)
	}
}

// Answer runs a request on the calling goroutine: when it returns, the
// answer is written. Close cancels a request being answered, waits for
// it, and refuses what comes after, on a Conn with no reader at all.
func TestAnswerRunsOnTheCallersGoroutine(t *testing.T) {
	leakCheck(t)
	entered := make(chan struct{})
	var returned atomic.Bool
	h := handlerFuncs{req: func(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		if method == "quick" {
			return json.RawMessage(`"quick"`), nil
		}
		close(entered)
		<-ctx.Done()
		returned.Store(true)
		return nil, ctx.Err()
	}}
	out := make(msgSink, 4)
	conn := NewConn(nil, out, h, nil)

	if err := conn.Answer([]byte(`{"jsonrpc":"2.0","id":1,"method":"quick"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-out:
		if !strings.Contains(got, `"quick"`) {
			t.Errorf("answer %s", got)
		}
	default:
		t.Fatal("Answer returned before its answer was written")
	}

	answered := make(chan error, 1)
	go func() { answered <- conn.Answer([]byte(`{"jsonrpc":"2.0","id":2,"method":"slow"}`)) }()
	waitClosed(t, entered, "the slow request's handler")
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Error("Close returned before the handler of the request it cancelled")
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if got := <-out; !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"error"`) {
		t.Errorf("answer of the request Close cancelled: %s", got)
	}
	if err := conn.Answer([]byte(`{"jsonrpc":"2.0","id":3,"method":"quick"}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Answer after Close: %v, want ErrClosed", err)
	}
	if _, err := conn.Call(testCtx(t), "ping", nil); !errors.Is(err, ErrNotSent) {
		t.Errorf("Call after Close: %v, want ErrNotSent", err)
	}
	select {
	case <-conn.Done():
	default:
		t.Error("Done is open after Close")
	}
}

// Close ends a Conn serving a reader it can close (a pipe): the read loop
// and every handler have returned when it does, Serve returns nil, and a
// Deliver after is refused.
func TestCloseWaitsForTheReadLoopAndHandlers(t *testing.T) {
	leakCheck(t)
	entered := make(chan struct{})
	var returned atomic.Bool
	h := handlerFuncs{req: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(entered)
		<-ctx.Done()
		returned.Store(true)
		return nil, ctx.Err()
	}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	t.Cleanup(func() { _ = outW.Close() })
	conn := NewConn(NewLineReader(inR), NewLineWriter(outW), h, nil)
	served := make(chan error, 1)
	go func() { served <- conn.Serve() }()
	writeLine(t, inW, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	waitClosed(t, entered, "the request's handler")

	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Error("Close returned before the handler it cancelled")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after Close: %v", err)
		}
	default:
		t.Error("Close returned before the read loop")
	}
	if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","method":"late"}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Deliver after Close: %v, want ErrClosed", err)
	}
	if _, err := io.WriteString(inW, "{}\n"); err == nil {
		t.Error("the input pipe is still read after Close")
	}
}

func writeLine(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// servedPipes serves a Conn with handler h over two pipes: what the test
// writes to in, and reads from out. stop ends its input and waits for
// Serve (once; the test's cleanup calls it too).
func servedPipes(t *testing.T, h Handler, opts *Options) (conn *Conn, in io.Writer, out *bufio.Reader, stop func() error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn = NewConn(NewLineReader(inR), NewLineWriter(outW), h, opts)
	served := make(chan error, 1)
	go func() { served <- conn.Serve() }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			_ = inW.Close()
			err = <-served
			_ = outW.Close()
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return conn, inW, bufio.NewReader(outR), stop
}

// A read buffer released by one LineReader serves the next one, and the
// lines the first returned are the caller's: reusing it changes none.
func TestLineReaderReleasedBufferIsReused(t *testing.T) {
	first := NewLineReader(strings.NewReader("{\"a\":1}\n{\"b\":2}\n"))
	a, _, errA := first.Next(0)
	b, _, errB := first.Next(0)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	first.release()
	for range 3 { // whichever buffer the pool gives
		next := NewLineReader(strings.NewReader(strings.Repeat("x", 3000) + "\n"))
		if line, _, err := next.Next(0); err != nil || len(line) != 3001 {
			t.Fatalf("a line through a reused buffer: %d bytes, %v", len(line), err)
		}
		next.release()
	}
	if string(a) != "{\"a\":1}\n" || string(b) != "{\"b\":2}\n" {
		t.Errorf("the first reader's lines changed after its buffer was reused: %q %q", a, b)
	}
}

// Close on a Conn whose reader it cannot close (a blocking stdin's, hidden
// by Unclosable) returns without waiting for the read in progress; what
// that read then returns is neither dispatched nor answered, and Serve
// ends.
func TestCloseLeavesAnUnclosableReadAndDispatchesNothingAfter(t *testing.T) {
	leakCheck(t)
	var late atomic.Bool
	h := handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		if method == "late" {
			late.Store(true)
		}
		return json.RawMessage(`{}`), nil
	}}
	inR, inW := io.Pipe()
	out := make(msgSink, 2)
	conn := NewConn(NewLineReader(Unclosable(inR)), out, h, &Options{AnswerInvalid: true})
	served := make(chan error, 1)
	go func() { served <- conn.Serve() }()
	writeLine(t, inW, `{"jsonrpc":"2.0","id":1,"method":"first"}`)
	<-out // answered: the read loop goes back to reading inR
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	writeLine(t, inW, `{"jsonrpc":"2.0","id":2,"method":"late"}`)
	if err := <-served; err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
	_ = inW.Close()
	if late.Load() {
		t.Error("a request read after Close was handled")
	}
	select {
	case m := <-out:
		t.Errorf("written after Close: %s", m)
	default:
	}
}

// A writer that takes labels gets NotifyFor's and CallFor's with their
// message, untouched; every other message comes without one.
func TestLabelsReachALabelWriter(t *testing.T) {
	leakCheck(t)
	out := make(testkit.LabelSink, 4)
	conn := NewConn(nil, out, handlerFuncs{}, nil)
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.NotifyFor("call-7", "notifications/message", json.RawMessage(`{"level":"info"}`)); err != nil {
		t.Fatal(err)
	}
	if got := <-out; got != [2]string{"call-7", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`} {
		t.Errorf("NotifyFor wrote %q", got)
	}
	if err := conn.Notify("notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	if got := <-out; got[0] != "-" {
		t.Errorf("Notify wrote %q, want no label", got)
	}
	called := make(chan error, 1)
	go func() {
		_, err := conn.CallFor(testCtx(t), `"c"`, "elicitation/create", json.RawMessage(`{}`))
		called <- err
	}()
	req := <-out
	if req[0] != `"c"` || !strings.Contains(req[1], `"elicitation/create"`) {
		t.Fatalf("CallFor wrote %q", req)
	}
	var m struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(req[1]), &m); err != nil {
		t.Fatal(err)
	}
	if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-called; err != nil {
		t.Errorf("CallFor: %v", err)
	}
}

// CallExchange gives the request to its exchange on the calling goroutine,
// not to the writer; an answer the exchange delivers is the call's result
// when the exchange returns, one delivered later (another goroutine's)
// still ends the call, and a call whose ctx ends first tells the peer
// through the writer.
func TestCallExchange(t *testing.T) {
	leakCheck(t)
	out := make(msgSink, 4)
	conn := NewConn(nil, out, handlerFuncs{}, nil)
	defer conn.Close()
	idOf := func(msg []byte) string {
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("exchange got %q: %v", msg, err)
		}
		return string(m.ID)
	}

	// Answered within the exchange.
	var gave string
	res, err := conn.CallExchange(testCtx(t), "ping", json.RawMessage(`{"a":1}`), func(msg []byte) {
		gave = string(msg)
		if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","id":` + idOf(msg) + `,"result":{"pong":1}}`)); err != nil {
			t.Error(err)
		}
	})
	if err != nil || string(res) != `{"pong":1}` {
		t.Errorf("call answered in its exchange: %s, %v", res, err)
	}
	if !strings.Contains(gave, `"method":"ping"`) || !strings.Contains(gave, `"params":{"a":1}`) || strings.HasSuffix(gave, "\n") {
		t.Errorf("exchange got %q, want the whole request without a newline", gave)
	}

	// Answered after the exchange returned, from another goroutine.
	ids := make(chan string, 1)
	later := goCallExchange(conn, testCtx(t), func(msg []byte) { ids <- idOf(msg) })
	id := <-ids
	if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":"late"}`)); err != nil {
		t.Fatal(err)
	}
	if r := waitCall(t, later); r.err != nil || string(r.res) != `"late"` {
		t.Errorf("call answered after its exchange: %s, %v", r.res, r.err)
	}

	// Cancelled before any answer: the peer is told, through the writer.
	ctx, cancel := context.WithCancel(testCtx(t))
	cancelled := goCallExchange(conn, ctx, func(msg []byte) { ids <- idOf(msg) })
	id = <-ids
	cancel()
	if r := waitCall(t, cancelled); !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", r.err)
	}
	if got := <-out; !strings.Contains(got, `"method":"notifications/cancelled"`) || !strings.Contains(got, `"requestId":`+id) {
		t.Errorf("the peer was told %q, want notifications/cancelled for %s", got, id)
	}
	select {
	case m := <-out:
		t.Errorf("the writer got %q: a request went to it rather than to the exchange", m)
	default:
	}
}

func goCallExchange(c *Conn, ctx context.Context, exchange func(msg []byte)) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := c.CallExchange(ctx, "ping", nil, exchange)
		ch <- callResult{res: res, err: err}
	}()
	return ch
}
