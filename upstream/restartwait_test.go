package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// gatedRestarts is a fleet of one in-memory server whose restarts wait for
// the test: every dial after the first blocks until the test sends it the
// error to fail with (nil: connect).
type gatedRestarts struct {
	srv     *memserver.Server
	fleet   *Fleet
	c       *Client
	dials   chan chan error // a restart waiting for the test's word
	hanging chan struct{}   // the server has a call of hang
}

func newGatedRestarts(t *testing.T, restart time.Duration, policy RestartPolicy) *gatedRestarts {
	t.Helper()
	g := &gatedRestarts{dials: make(chan chan error), hanging: make(chan struct{}, 1)}
	g.srv = &memserver.Server{Tools: []json.RawMessage{memserver.Tool("echo", ""), memserver.Tool("hang", "")}}
	g.srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if strings.Contains(string(params), `"hang"`) {
			g.hanging <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return json.RawMessage(`{"content":[]}`), nil
	}
	var dialed atomic.Bool
	dial := memDial(memserver.Set{"mem": g.srv})
	spec := memSpec("mem")
	spec.Timeouts.Restart = config.Duration(restart)
	g.fleet = NewFleet(&Options{
		CacheDir: t.TempDir(),
		Restart:  policy,
		Dial: func(spec config.Spec, h jsonrpc.Handler) (Transport, error) {
			if dialed.Swap(true) {
				word := make(chan error)
				g.dials <- word
				if err := <-word; err != nil {
					return nil, err
				}
			}
			return dial(spec, h)
		},
	})
	t.Cleanup(func() { _ = g.fleet.Close(context.Background()) })
	if err := g.fleet.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	g.c, _ = g.fleet.Client("mem")
	return g
}

// crash ends the server's connection with a call in flight, and returns,
// once the server is restarting and its restart waits, the restart and
// that call's error.
func (g *gatedRestarts) crash(t *testing.T) (restart chan error, inFlight error) {
	t.Helper()
	ctx := ctxFor(t)
	failed := make(chan error, 1)
	go func() {
		_, err := g.c.Call(ctx, "tools/call", json.RawMessage(`{"name":"hang","arguments":{}}`))
		failed <- err
	}()
	select {
	case <-g.hanging:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	_ = g.srv.Conn().Close(ctx)
	select {
	case restart = <-g.dials:
	case <-ctx.Done():
		t.Fatal("no restart")
	}
	return restart, <-failed
}

// calls makes n calls of echo at once; their errors come on the channel.
func (g *gatedRestarts) calls(ctx context.Context, n int) <-chan error {
	out := make(chan error, n)
	for range n {
		go func() {
			_, err := g.c.Call(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{}}`))
			out <- err
		}()
	}
	return out
}

// Calls made while a server restarts wait for it and are sent once it is
// back; only the call in flight at the crash fails, saying the server
// crashed.
func TestCallsWaitForARestart(t *testing.T) {
	g := newGatedRestarts(t, time.Minute, RestartPolicy{MaxAttempts: 3, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Stable: time.Minute})
	restart, inFlight := g.crash(t)
	if inFlight == nil || !strings.Contains(inFlight.Error(), `server "mem" crashed while tools/call was in flight`) {
		t.Errorf("the call in flight at the crash: %v, want it to say the server crashed", inFlight)
	}
	if state, _ := g.c.State(); state != StateRestarting {
		t.Fatalf("state %s while the restart waits", state)
	}
	const n = 4
	results := g.calls(ctxFor(t), n)
	select {
	case err := <-results:
		t.Fatalf("a call made during the restart returned before it: %v", err)
	default:
	}
	restart <- nil
	for range n {
		if err := <-results; err != nil {
			t.Errorf("a call made during the restart: %v, want it served once the server is back", err)
		}
	}
}

// A server that does not come back fails the calls waiting for it with
// the reason, not a timeout; one that is not back within timeouts.restart
// fails them naming the setting and why the server went away.
func TestCallsWaitingForARestartFail(t *testing.T) {
	t.Run("not restarted", func(t *testing.T) {
		g := newGatedRestarts(t, time.Minute, RestartPolicy{MaxAttempts: 1, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Stable: time.Minute})
		restart, _ := g.crash(t)
		results := g.calls(ctxFor(t), 2)
		restart <- errors.New("the binary is gone")
		for range 2 {
			err := <-results
			if err == nil || !strings.Contains(err.Error(), "the binary is gone") || strings.Contains(err.Error(), "timeouts.restart") {
				t.Errorf("a call waiting for a server that failed: %v, want the reason it failed", err)
			}
		}
	})
	t.Run("bound", func(t *testing.T) {
		g := newGatedRestarts(t, 50*time.Millisecond, RestartPolicy{MaxAttempts: 3, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Stable: time.Minute})
		restart, _ := g.crash(t)
		err := <-g.calls(ctxFor(t), 1)
		if err == nil || !strings.Contains(err.Error(), "timeouts.restart") || !strings.Contains(err.Error(), `server "mem"`) {
			t.Errorf("a call waiting past timeouts.restart: %v", err)
		}
		restart <- nil
	})
}
