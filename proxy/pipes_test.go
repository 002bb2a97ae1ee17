package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// pipeHost is a host on the other end of Trunk.Serve over pipes, for tests
// that need the exact lines the trunk writes.
type pipeHost struct {
	t      testing.TB
	in     *io.PipeWriter
	lines  chan string // every line the trunk wrote, in order; closed at EOF
	served chan error  // Serve's return
	cancel func()      // shuts the trunk down
}

// servePipes runs tr.Serve on pipes until the test ends.
func servePipes(t testing.TB, tr *Trunk) *pipeHost {
	return runPipes(t, tr.Serve)
}

// attachPipes runs a session of tr with opts on pipes until the test
// ends, and then closes tr.
func attachPipes(t *testing.T, tr *Trunk, opts *SessionOptions) *pipeHost {
	return runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
		err := tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), opts).Run(ctx)
		return errors.Join(err, tr.Close(context.WithoutCancel(ctx)))
	})
}

// runPipes runs serve on pipes until the test ends.
func runPipes(t testing.TB, serve func(context.Context, io.Reader, io.Writer) error) *pipeHost {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &pipeHost{t: t, in: inW, lines: make(chan string, 64), served: make(chan error, 1), cancel: cancel}
	done := make(chan struct{})
	go func() { h.served <- serve(ctx, inR, outW); _ = outW.Close(); close(done) }()
	// The test ends when the trunk has: its servers, stopping, write to
	// the test's directories (the catalog cache) until they have stopped.
	t.Cleanup(func() {
		cancel()
		_ = inW.Close() // as a host that has gone: a session reading on the caller's goroutine sees EOF
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the trunk did not stop within 30 s of the test's end")
		}
	})
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	return h
}

// send writes one line to the trunk.
func (h *pipeHost) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// next is the trunk's next line, or a failure naming what was awaited.
func (h *pipeHost) next(what string) string {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("the trunk closed its output while waiting for %s", what)
		}
		return l
	case <-time.After(30 * time.Second):
		h.t.Fatalf("waiting for %s", what)
		return ""
	}
}

// answer waits for the trunk's response to request id, passing over the
// lines before it.
func (h *pipeHost) answer(id string) map[string]json.RawMessage {
	h.t.Helper()
	for {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(h.next("the answer to request "+id)), &m) == nil && string(m["id"]) == id {
			return m
		}
	}
}
