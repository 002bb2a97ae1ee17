package upstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio"
)

func transportOf(c *Client) *stdio.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t.Transport.(*stdio.Transport)
}

// A server that ignores both stdin EOF and SIGTERM is killed with its
// process group; Close is idempotent and safe to call from many goroutines
// at once, on the Client and on the Fleet.
func TestCloseEscalatesToKill(t *testing.T) {
	needProcfs(t)
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("stubborn", modeStubborn))
	pid := h.pid("stubborn", "pid")
	tr := transportOf(c)

	ctx := ctxFor(t)
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			if i%3 == 0 {
				errs <- host.Close(ctx)
			} else {
				errs <- c.Close(ctx)
			}
		})
	}
	closed := make(chan struct{})
	go func() { wg.Wait(); close(closed) }()
	awaitClosed(t, closed, "every Close to return")
	took := time.Since(began)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	t.Logf("Close took %v", took)
	if took < stdio.StdinGrace+stdio.TermGrace {
		t.Errorf("Close took %v, less than stdio.StdinGrace+stdio.TermGrace (%v): it did not wait before killing", took, stdio.StdinGrace+stdio.TermGrace)
	}
	if took > stdio.StdinGrace+stdio.TermGrace+slack {
		t.Errorf("Close took %v", took)
	}
	if alive(pid) {
		t.Fatalf("the server (pid %d) still runs after Close", pid)
	}
	if err := tr.Err(); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("the transport says the process ended with %v, want killed", err)
	}
	for _, want := range []string{"server ignored stdin EOF; terminating it", "server ignored SIGTERM; killing its process group"} {
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}

	if state, _ := c.State(); state != StateClosed {
		t.Errorf("state %s after Close", state)
	}
	_, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo"))
	if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); !ok || rpcErr.Code != jsonrpc.CodeUnavailable || !strings.Contains(rpcErr.Message, "shut down") {
		t.Errorf("a call after Close: %v", err)
	}
	began = time.Now()
	if err := c.Close(ctx); err != nil || time.Since(began) > slack {
		t.Errorf("closing again: %v after %v", err, time.Since(began))
	}
}

// Close with a context that has ended skips the grace periods.
func TestCloseWithEndedContextKillsAtOnce(t *testing.T) {
	needProcfs(t)
	withGrace(t, &stdio.StdinGrace, 20*time.Second)
	withGrace(t, &stdio.TermGrace, 20*time.Second)
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("stubborn", modeStubborn))
	pid := h.pid("stubborn", "pid")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	began := time.Now()
	_ = c.Close(ctx)
	took := time.Since(began)
	t.Logf("Close took %v", took)
	if took > slack {
		t.Errorf("Close with an ended context took %v: it waited out the grace periods", took)
	}
	if alive(pid) {
		t.Errorf("the server (pid %d) still runs after Close", pid)
	}
}

// Closing a server kills what it started too: its whole process group.
func TestCloseKillsGrandchild(t *testing.T) {
	needProcfs(t)
	withGrace(t, &stdio.StdinGrace, 10*time.Second) // time enough to exit politely, however loaded the machine
	h := newHarness(t)
	host := h.host(nil)
	startReady(t, h, host, h.spec("parent", modeGrandchild))
	pid, grandchild := h.pid("parent", "pid"), h.pid("parent", "grandchild")
	if !alive(grandchild) {
		t.Fatalf("the grandchild %d is not running", grandchild)
	}

	began := time.Now()
	if err := host.Close(ctxFor(t)); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(began))
	if alive(pid) {
		t.Errorf("the server (pid %d) still runs after Close", pid)
	}
	awaitGone(t, grandchild, "the grandchild")
	if strings.Contains(h.log.String(), "ignored stdin EOF") {
		t.Error("the server exited on stdin EOF, but Close escalated")
	}
}

// A server that dies while a grandchild holds its stdout open is still
// noticed (the reader gives up after stdio.OutputGrace), and its group is killed.
func TestCrashWithGrandchildHoldingStdout(t *testing.T) {
	needProcfs(t)
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("parent", modeGrandchild))
	grandchild := h.pid("parent", "grandchild")

	began := time.Now()
	_, err := c.Call(ctxFor(t), "tools/call", toolArgs("crash"))
	took := time.Since(began)
	t.Logf("the call failed after %v: %v", took, err)
	if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); !ok || rpcErr.Code != jsonrpc.CodeUnavailable || !strings.Contains(rpcErr.Message, "exit status 3") {
		t.Errorf("the call failed with %v, want unavailable saying exit status 3", err)
	}
	if took > stdio.OutputGrace+slack {
		t.Errorf("the call took %v to fail", took)
	}
	pollUntil(t, "the Client to notice the death", func() bool {
		state, _ := c.State()
		return state == StateFailed
	})
	awaitGone(t, grandchild, "the grandchild of the dead server")
}

// The stderr tail in a failure holds the last lines the server wrote, up
// to the very last, even when it wrote a lot just before it died.
func TestStderrTailIsComplete(t *testing.T) {
	withGrace(t, &stdio.OutputGrace, slack) // time enough to drain, however loaded the machine
	h := newHarness(t)
	host := h.host(nil)
	const spam = 500 // lines, written just before the exit
	for i := range 5 {
		name := fmt.Sprintf("exits%d", i)
		err := host.Add(ctxFor(t), h.spec(name, modeExit, envStderr, strconv.Itoa(spam)))
		if err == nil {
			t.Fatal("the server that exits started")
		}
		want := fmt.Sprintf("spam line %d\n", spam-1) + `fatal: cannot open database "/nonexistent"`
		if !strings.HasSuffix(err.Error(), want) {
			msg := err.Error()
			t.Fatalf("attempt %d: the error does not end with the server's last stderr lines:\n...%s", i, msg[max(0, len(msg)-200):])
		}
		if n := strings.Count(err.Error(), "\n"); n != stdio.TailLines-1 {
			t.Errorf("the tail has %d lines, want %d", n+1, stdio.TailLines)
		}
	}
}
