package upstream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// guard protects one server from its callers: a cap on calls in flight
// with a bounded queue (maxInFlight, maxQueued), and for a remote server
// a circuit breaker (breaker). Every Call passes it once, however often
// the call is retried across a restart; the zero configuration admits
// every call at once.
type guard struct {
	// fixed at creation
	server   string
	max      int           // 0: no cap
	queue    int           // calls that may wait for a slot
	slots    chan struct{} // a token per call in flight; nil without a cap
	failures int           // 0: no breaker
	cooldown time.Duration
	now      func() time.Time // read under mu: a test may replace it

	mu          sync.Mutex
	waiting     int       // calls waiting for a slot
	consecutive int       // calls without an answer since the last answer
	openUntil   time.Time // zero: closed; else open until then, half-open after
	probing     bool      // half-open: the probe call is in flight
	lastFailure string    // why the last call got no answer
	opened      int64     // times the breaker opened
}

// newGuard is the guard of the server id, under spec's settings.
func newGuard(id string, spec config.Spec) *guard {
	g := &guard{
		server:   id,
		max:      spec.MaxInFlight,
		queue:    spec.MaxQueued,
		failures: spec.Breaker.Failures,
		cooldown: spec.Breaker.Cooldown.D(),
		now:      time.Now,
	}
	if g.max > 0 {
		g.slots = make(chan struct{}, g.max)
		if g.queue == 0 {
			g.queue = config.DefaultMaxQueued
		}
	}
	return g
}

// ticket is one admitted call: done must be called with its outcome.
type ticket struct {
	slot, probe bool
}

// Outcomes of a call, as the breaker counts them.
type outcome int

const (
	answered  outcome = iota // the server answered (a result, or an error it sent)
	noAnswer                 // a timeout or a transport error: counts toward the breaker
	abandoned                // the caller gave up: says nothing of the server
)

// admit lets a call through the breaker and takes a slot, waiting for
// one within ctx and wait (the call's own timeout). A refusal is a
// CodeUnavailable error naming the server and the setting; ctx's own
// cancellation is returned as it is.
func (g *guard) admit(ctx context.Context, wait time.Duration) (ticket, error) {
	var tk ticket
	probe, err := g.pass()
	if err != nil {
		return tk, err
	}
	tk.probe = probe
	if g.slots == nil {
		return tk, nil
	}
	select {
	case g.slots <- struct{}{}:
		tk.slot = true
		return tk, nil
	default:
	}
	g.mu.Lock()
	if g.waiting >= g.queue {
		g.mu.Unlock()
		g.done(tk, abandoned)
		return ticket{}, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is busy: %d calls in flight (maxInFlight %d) and %d waiting (maxQueued %d); try again later",
			g.server, g.max, g.max, g.queue, g.queue)
	}
	g.waiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	var expired <-chan time.Time
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case g.slots <- struct{}{}:
		tk.slot = true
		return tk, nil
	case <-expired:
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			g.done(tk, abandoned)
			return ticket{}, ctx.Err()
		}
	}
	g.done(tk, abandoned)
	return ticket{}, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is busy: no slot of its %d (maxInFlight) came free within the call's deadline", g.server, g.max)
}

// pass is the breaker's part of admit: it reports whether the call is the
// probe of a half-open breaker, or why it may not go.
func (g *guard) pass() (probe bool, _ error) {
	if g.failures == 0 {
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.openUntil.IsZero() {
		return false, nil
	}
	now := g.now()
	if now.Before(g.openUntil) {
		return false, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is failing (%d calls in a row without an answer, the last: %s): calls fail at once until %s (in %s), when one is let through to try it again",
			g.server, g.consecutive, g.lastFailure, g.openUntil.UTC().Format(time.TimeOnly), g.openUntil.Sub(now).Round(time.Second))
	}
	if g.probing {
		return false, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is failing (%d calls in a row without an answer, the last: %s): one call is trying it again now; the others fail until it answers",
			g.server, g.consecutive, g.lastFailure)
	}
	g.probing = true
	return true, nil
}

// done ends an admitted call with its outcome: it frees the call's slot
// and moves the breaker (an answer closes it; a call without one counts,
// and the failures-th in a row, or a failed probe, opens it for cooldown).
func (g *guard) done(tk ticket, o outcome, why ...error) {
	if tk.slot {
		<-g.slots
	}
	if g.failures == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if tk.probe {
		g.probing = false
	}
	switch o {
	case answered:
		g.consecutive, g.openUntil, g.lastFailure = 0, time.Time{}, ""
	case noAnswer:
		g.consecutive++
		if len(why) > 0 && why[0] != nil {
			g.lastFailure = why[0].Error()
		}
		if tk.probe || g.consecutive >= g.failures && g.openUntil.IsZero() {
			g.openUntil = g.now().Add(g.cooldown)
			g.opened++
		}
	}
}

// guardStatus is what Status reports of a server's guard.
type guardStatus struct {
	waiting, inFlight int
	breaker           string
	retryAt           time.Time
	consecutive       int
	opened            int64
}

// Breaker states as Status reports them.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half-open" // the cooldown passed: the next call is the probe
)

func (g *guard) status() guardStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := guardStatus{waiting: g.waiting, inFlight: len(g.slots), consecutive: g.consecutive, opened: g.opened}
	if g.failures == 0 {
		return s
	}
	switch {
	case g.openUntil.IsZero():
		s.breaker = BreakerClosed
	case g.now().Before(g.openUntil):
		s.breaker, s.retryAt = BreakerOpen, g.openUntil
	default:
		s.breaker = BreakerHalfOpen
	}
	return s
}
