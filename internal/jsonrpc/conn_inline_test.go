package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// With InlineRequests a request runs on the read loop: the next line is
// not read until it is answered, so the handler of the first request sees
// the second still unread. Calling the peer fails at once, and
// CancelRequests ends the request's context.
func TestInlineRequestsRunOnTheReadLoop(t *testing.T) {
	leakCheck(t)
	entered := make(chan struct{})
	var (
		conn *Conn
		inW  io.Writer
		out  *bufio.Reader
	)
	var callErr error
	h := handlerFuncs{req: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method == "second" {
			return json.RawMessage(`"second"`), nil
		}
		_, callErr = conn.Call(ctx, "ping", nil)
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	conn, inW, out, _ = servedPipes(t, h, &Options{InlineRequests: true})

	writeLine(t, inW, `{"jsonrpc":"2.0","id":1,"method":"first"}`)
	waitClosed(t, entered, "the first request's handler")
	if callErr == nil || !strings.Contains(callErr.Error(), "cannot wait for an answer") {
		t.Errorf("Call from an inline handler: %v, want an error saying no answer can be read", callErr)
	}
	// The read loop is busy with the first request: this line stays in
	// the pipe, its Write blocked until the loop reads again.
	second := make(chan error, 1)
	go func() {
		_, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"second"}`+"\n")
		second <- err
	}()
	for range 100 {
		runtime.Gosched()
	}
	select {
	case err := <-second:
		t.Fatalf("the second line was read while the first request ran (write: %v)", err)
	default:
	}

	conn.CancelRequests()
	first := readLine(t, out)
	if !strings.Contains(first, `"id":1`) || !strings.Contains(first, `"error"`) {
		t.Errorf("first answer %s, want the cancelled request's error", first)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, out); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `"second"`) {
		t.Errorf("second answer %s", got)
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
	conn = NewConn(inR, outW, h, opts)
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
