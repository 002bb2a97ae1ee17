package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// heldServer is an in-memory server whose tools/call is held until the
// test releases it; it counts the calls it has in flight, and the most it
// ever had.
type heldServer struct {
	*memserver.Server
	release        chan struct{}
	inFlight, peak atomic.Int64
	seen           atomic.Int64
}

func newHeldServer() *heldServer {
	h := &heldServer{Server: &memserver.Server{Tools: []json.RawMessage{memserver.Tool("hold", "waits for the test")}}, release: make(chan struct{})}
	h.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/call" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		h.seen.Add(1)
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
		}
		select {
		case <-h.release:
			return json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h
}

// startHeld starts srv under spec on a Fleet of its own.
func startHeld(t *testing.T, srv *heldServer, spec config.Spec) *Client {
	t.Helper()
	fleet := NewFleet(&Options{Dial: memDial(memserver.Set{spec.Name: srv.Server}), CacheDir: t.TempDir()})
	t.Cleanup(func() { fleet.Close(context.Background()) })
	return startSettled(t, fleet, spec)
}

const holdParams = `{"name":"hold","arguments":{}}`

// TestMaxInFlightCapsTheServer: a server capped at 2 calls in flight never
// has a third while 6 callers call it; the 4 others wait their turn (and
// status shows them waiting), and every call is answered.
func TestMaxInFlightCapsTheServer(t *testing.T) {
	ctx := ctxFor(t)
	srv := newHeldServer()
	spec := memSpec("capped")
	spec.MaxInFlight = 2
	c := startHeld(t, srv, spec)

	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			_, err := c.Call(ctx, "tools/call", json.RawMessage(holdParams))
			errs <- err
		})
	}
	pollUntil(t, "2 calls at the server and 4 waiting", func() bool {
		st := c.Status()
		return srv.inFlight.Load() == 2 && st.InFlight == 2 && st.Queued == 4
	})
	if st := c.Status(); st.MaxInFlight != 2 {
		t.Errorf("status maxInFlight %d, want 2", st.MaxInFlight)
	}
	close(srv.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a call: %v", err)
		}
	}
	if got := srv.peak.Load(); got != 2 {
		t.Errorf("the server had at most %d calls in flight, want 2", got)
	}
	if got := srv.seen.Load(); got != 6 {
		t.Errorf("the server saw %d calls, want 6", got)
	}
}

// TestMaxQueuedRefusesAtOnce: past the cap and a full queue, a call fails
// at once naming the server and both settings; a waiting call whose
// deadline passes fails naming the server and the cap, without reaching
// the server.
func TestMaxQueuedRefusesAtOnce(t *testing.T) {
	ctx := ctxFor(t)
	srv := newHeldServer()
	spec := memSpec("narrow")
	spec.MaxInFlight, spec.MaxQueued = 1, 1
	c := startHeld(t, srv, spec)

	first := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "tools/call", json.RawMessage(holdParams))
		first <- err
	}()
	pollUntil(t, "the first call at the server", func() bool { return srv.inFlight.Load() == 1 })

	waitCtx, cancelWait := context.WithCancel(ctx)
	defer cancelWait()
	waiter := make(chan error, 1)
	go func() {
		_, err := c.Call(waitCtx, "tools/call", json.RawMessage(holdParams))
		waiter <- err
	}()
	pollUntil(t, "one call waiting", func() bool { return c.Status().Queued == 1 })
	_, err := c.Call(ctx, "tools/call", json.RawMessage(holdParams))
	if err == nil || !strings.Contains(err.Error(), `server "narrow" is busy`) || !strings.Contains(err.Error(), "maxInFlight 1") || !strings.Contains(err.Error(), "maxQueued 1") {
		t.Errorf("a call past a full queue: %v, want the server busy naming maxInFlight and maxQueued", err)
	}
	cancelWait()
	if err := <-waiter; !errors.Is(err, context.Canceled) {
		t.Errorf("a waiting call whose caller gave up: %v, want context.Canceled", err)
	}

	shortCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = c.Call(shortCtx, "tools/call", json.RawMessage(holdParams))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeUnavailable || !strings.Contains(err.Error(), `server "narrow" is busy: no slot of its 1 (maxInFlight)`) {
		t.Errorf("a waiting call past its deadline: %v, want the server busy naming the cap", err)
	}
	if got := srv.seen.Load(); got != 1 {
		t.Errorf("the server saw %d calls, want only the first", got)
	}
	close(srv.release)
	if err := <-first; err != nil {
		t.Errorf("the first call: %v", err)
	}
}

// useClock puts c's guard on a fake clock.
func useClock(c *Client) *testkit.Clock {
	clock := testkit.NewClock(time.Now())
	c.guard.mu.Lock()
	c.guard.now = clock.Now
	c.guard.mu.Unlock()
	return clock
}

// TestBreakerFailsFastAndRecovers: a remote server that times out three
// times in a row has the next call fail at once with the breaker's
// message, before the server even sees it; once the cooldown has passed,
// one call tries the server again and its answer closes the breaker.
func TestBreakerFailsFastAndRecovers(t *testing.T) {
	checkLeaks(t)
	ctx := ctxFor(t)
	r := startRemote(t, "http")
	spec := remoteConfig(t, "flaky", "http", r.url, `{"connect": "5s", "list": "5s", "call": "300ms"}`)
	spec.Breaker = config.Breaker{Failures: 3, Cooldown: config.Duration(time.Minute)}
	th := newTestHost(t, nil)
	defer th.closeHost(t)
	c := th.startOne(t, spec)
	clock := useClock(c)

	hang := make(chan struct{})
	defer close(hang)
	r.rec.setIntercept(func(w http.ResponseWriter, req *http.Request, rec recorded) bool {
		if rec.rpcMethod != "tools/call" {
			return false
		}
		select { // no answer: the call times out
		case <-req.Context().Done():
		case <-hang:
		}
		return true
	})
	calls := func() int { return r.rec.count(http.MethodPost, "tools/call") }
	for i := range 3 {
		_, err := callTool(ctx, c, "echo", map[string]any{"text": "hi"})
		if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
			t.Fatalf("call %d: %v, want a timeout", i+1, err)
		}
	}
	if st := c.Status(); st.Breaker != BreakerOpen || st.FailuresInRow != 3 || st.BreakerOpened != 1 {
		t.Errorf("status after 3 timeouts: breaker %q, %d in a row, opened %d; want open, 3, 1", st.Breaker, st.FailuresInRow, st.BreakerOpened)
	}

	seen := calls()
	began := time.Now()
	_, err := callTool(ctx, c, "echo", map[string]any{"text": "hi"})
	t.Logf("the call the breaker refused returned in %s (the call timeout is 300ms)", time.Since(began))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeUnavailable ||
		!strings.Contains(err.Error(), `server "flaky" is failing (3 calls in a row without an answer`) ||
		!strings.Contains(err.Error(), "calls fail at once until") {
		t.Fatalf("the call after 3 timeouts: %v, want the breaker's message", err)
	}
	if got := calls(); got != seen {
		t.Errorf("the refused call reached the server (%d tools/call, %d before): it did not fail at once", got, seen)
	}

	// The cooldown passes and the server answers again: the probe closes it.
	r.rec.setIntercept(nil)
	clock.Add(time.Minute)
	if st := c.Status(); st.Breaker != BreakerHalfOpen {
		t.Errorf("status after the cooldown: breaker %q, want %q", st.Breaker, BreakerHalfOpen)
	}
	res, err := callTool(ctx, c, "echo", map[string]any{"text": "back"})
	if err != nil || toolText(t, res) != "echo: back" {
		t.Fatalf("the probe call: %s, %v", res, err)
	}
	if st := c.Status(); st.Breaker != BreakerClosed || st.FailuresInRow != 0 {
		t.Errorf("status after the probe: breaker %q, %d in a row; want closed, 0", st.Breaker, st.FailuresInRow)
	}
	if _, err := callTool(ctx, c, "echo", map[string]any{"text": "again"}); err != nil {
		t.Errorf("a call after the breaker closed: %v", err)
	}
}

// TestGuardBreaker: the breaker's rules on a fake clock, without a server:
// an error the server answers is an answer and never opens it; a caller
// giving up does not count; past the cooldown one probe goes, the others
// still fail; a failed probe opens it again for a whole cooldown.
func TestGuardBreaker(t *testing.T) {
	g := newGuard("s", config.Spec{Name: "s", Breaker: config.Breaker{Failures: 2, Cooldown: config.Duration(time.Second)}})
	clock := testkit.NewClock(time.Now())
	g.now = clock.Now
	ctx := context.Background()
	call := func(o outcome) error {
		tk, err := g.admit(ctx, 0)
		if err == nil {
			g.done(tk, o, errors.New("timed out"))
		}
		return err
	}
	for range 5 {
		if err := call(answered); err != nil {
			t.Fatalf("an answered call refused: %v", err)
		}
	}
	_ = call(noAnswer)
	_ = call(abandoned)
	_ = call(answered) // an answer starts the count again
	_ = call(noAnswer)
	if st := g.status(); st.breaker != BreakerClosed {
		t.Fatalf("after one call without an answer since the last answer: %q, want closed", st.breaker)
	}
	_ = call(noAnswer)
	if err := call(answered); err == nil || !strings.Contains(err.Error(), "calls fail at once until") {
		t.Fatalf("after 2 in a row: %v, want refused", err)
	}

	clock.Add(time.Second)
	probe, err := g.admit(ctx, 0)
	if err != nil || !probe.probe {
		t.Fatalf("past the cooldown: %+v, %v; want the probe admitted", probe, err)
	}
	if err := call(answered); err == nil || !strings.Contains(err.Error(), "one call is trying it again now") {
		t.Errorf("a call beside the probe: %v, want refused", err)
	}
	g.done(probe, noAnswer, errors.New("timed out again"))
	if st := g.status(); st.breaker != BreakerOpen || !st.retryAt.Equal(clock.Now().Add(time.Second)) || st.opened != 2 {
		t.Errorf("after a failed probe: %+v, want open for a cooldown, opened twice", st)
	}
	clock.Add(time.Second)
	if err := call(answered); err != nil {
		t.Errorf("the next probe, answered: %v", err)
	}
	if st := g.status(); st.breaker != BreakerClosed || st.consecutive != 0 {
		t.Errorf("after an answered probe: %+v, want closed", st)
	}
}
