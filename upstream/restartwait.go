package upstream

import (
	"context"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// A request that finds its server gone (its connection ended, or its
// supervisor restarting it) waits for it rather than failing at once: a
// crash costs the calls that were in flight, not every call made during
// the restart. The wait is bounded by the request's own context and by the
// server's timeouts.restart; a server that is not restarted (failed,
// closed) fails the waiting requests at once, with the reason it went away.

// restartBound is one request's bound on waiting for a restart, started
// the first time the request waits.
type restartBound struct {
	timer *time.Timer
	d     time.Duration
}

func (b *restartBound) expired() <-chan time.Time {
	if b.timer == nil {
		b.timer = time.NewTimer(b.d)
	}
	return b.timer.C
}

func (b *restartBound) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}

// goneLocked reports whether the server is away and its supervisor will
// bring it back: restarting (not a lazy server's failed wake, which the
// next request retries itself), or still marked ready while its connection
// has ended and the supervisor has not yet noticed.
func (c *Client) goneLocked() bool {
	switch c.state {
	case StateRestarting:
		return !c.lazy.wakeFailed
	case StateReady:
		select {
		case <-c.t.Done():
			return true
		default:
		}
	}
	return false
}

// awaitBack waits while the server is gone (goneLocked) for its state to
// change, within b, ctx and the Client's life. It reports whether it
// waited; the error is why the wait failed: the bound passed (naming why
// the server went away and the setting), ctx ended, or the Client closed.
func (c *Client) awaitBack(ctx context.Context, b *restartBound) (waited bool, _ error) {
	for {
		c.mu.Lock()
		if !c.goneLocked() {
			c.mu.Unlock()
			return waited, nil
		}
		moved, why := c.moved, c.err
		if why == nil {
			why = fmt.Errorf("its connection ended: %w", c.t.Err())
		}
		c.mu.Unlock()
		waited = true
		select {
		case <-moved:
		case <-b.expired():
			return true, jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is restarting after: %v (not back within timeouts.restart, %s)", c.id, why, b.d)
		case <-ctx.Done():
			return true, ctx.Err()
		case <-c.life.Done():
			return true, c.unavailable(StateClosed, nil)
		}
	}
}

// AwaitRestart waits, as a request to the server does, while the server is
// being restarted, and reports whether it waited and the server is ready
// now: a caller that found the server's names withdrawn during the restart
// can then look them up again. It gives up silently where the request
// would fail (the bound, ctx, the server not coming back).
func (c *Client) AwaitRestart(ctx context.Context) bool {
	c.mu.Lock()
	gone := c.goneLocked()
	c.mu.Unlock()
	if !gone {
		return false
	}
	b := restartBound{d: c.spec.Timeouts.Restart.D()}
	defer b.stop()
	waited, err := c.awaitBack(ctx, &b)
	if !waited || err != nil {
		return false
	}
	state, _ := c.State()
	return state == StateReady
}
