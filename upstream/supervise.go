package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// RestartPolicy says how a server that went away, or failed to start, is
// started again. The zero policy never restarts: the server stays failed.
type RestartPolicy struct {
	// MaxAttempts is how many restarts in a row may fail (or die before
	// Stable) before the server is left failed. 0 disables restarts.
	MaxAttempts int
	// Backoff is the delay before the first restart; it doubles with each
	// attempt up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Stable is how long a server must stay up for its attempt count to
	// start over.
	Stable time.Duration
}

// DefaultRestartPolicy is what a long-running trunk uses: a few quick
// retries, then slower ones, then giving up with the last error kept.
var DefaultRestartPolicy = RestartPolicy{
	MaxAttempts: 6,
	Backoff:     250 * time.Millisecond,
	MaxBackoff:  30 * time.Second,
	Stable:      time.Minute,
}

// delay is the wait before restart attempt n (1-based).
func (p RestartPolicy) delay(n int) time.Duration {
	d := p.Backoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// supervise owns the server after its first attempt: it waits for the
// connection to go away, withdraws the server's names (state restarting or
// failed, which empties its catalog and reports the change), and starts it
// again after a backoff, until the policy gives up or the Client closes.
// decided, if not nil, is closed once the state after a failed first
// attempt is set.
func (c *Client) supervise(err error, decided chan<- struct{}) {
	defer c.workers.Done()
	decide := func() {
		if decided != nil {
			close(decided)
			decided = nil
		}
	}
	defer decide()
	policy := c.opts.restart
	attempts := 0
	for {
		if err == nil {
			upSince := time.Now()
			err = c.awaitLoss()
			if err == nil || c.asleep() {
				return // closed or put to sleep on purpose
			}
			c.logger.Error("server went away", logkey.Error, err)
			if time.Since(upSince) >= policy.Stable {
				attempts = 0
			}
		}
		c.authorizeIfNeeded(err)
		attempts++
		if attempts > policy.MaxAttempts {
			if policy.MaxAttempts > 0 {
				err = fmt.Errorf("%w (gave up after %d restarts)", err, policy.MaxAttempts)
			}
			c.setStateAwake(StateFailed, err)
			return
		}
		if !c.setStateAwake(StateRestarting, err) {
			return // put to sleep as the connection ended
		}
		decide()
		c.restarts.Add(1)
		wait := policy.delay(attempts)
		c.logger.Info("restarting server", "attempt", attempts, "in", wait)
		select {
		case <-time.After(wait):
		case <-c.life.Done():
			return
		}
		err = c.attempt(c.life)
	}
}

// asleep reports whether the server was put to sleep (lazy.go).
func (c *Client) asleep() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asleepLocked()
}

// setStateAwake is setState unless the server was put to sleep, which a
// lost connection must not undo; it reports whether it set the state.
func (c *Client) setStateAwake(state State, err error) bool {
	c.mu.Lock()
	if c.asleepLocked() || c.state == StateClosed {
		c.mu.Unlock()
		return false
	}
	c.state, c.err, c.since = state, err, time.Now()
	c.catalog = Catalog{}
	c.mu.Unlock()
	c.changed()
	return true
}

// Health checks: a server that stops answering pings while its process
// lives (deadlocked, wedged on I/O) counts as gone. Variables for tests.
var (
	pingInterval = 30 * time.Second
	pingTimeout  = 10 * time.Second
	pingFailures = 3 // in a row
)

// awaitLoss waits for the current connection to end, pinging it while it
// is idle. It returns nil when the Client was closed, else why the
// connection ended; the dead transport is closed so its goroutines and
// process are reaped.
func (c *Client) awaitLoss() error {
	c.mu.Lock()
	t := c.t
	c.mu.Unlock()
	ticker := time.NewTicker(pingInterval)
	defer ticker.Stop()
	missed := 0
	var err error
	for err == nil {
		select {
		case <-t.Done():
			err = fmt.Errorf("server %q went away: %w", c.id, t.Err())
		case <-c.life.Done():
			return nil
		case <-ticker.C:
			if c.ping(t) {
				missed = 0
				continue
			}
			if missed++; missed >= pingFailures {
				err = fmt.Errorf("server %q stopped answering: %d pings in a row got no answer within %s", c.id, missed, pingTimeout)
			}
		}
	}
	if c.life.Err() != nil {
		return nil
	}
	_ = t.Close(context.Background())
	return err
}

// ping reports whether the server answered a ping in time. Any answer,
// even an error, proves it is alive. At the stateless revision, which has
// no ping, the wire sends server/discover instead.
func (c *Client) ping(t Transport) bool {
	ctx, cancel := context.WithTimeout(c.life, pingTimeout)
	defer cancel()
	_, err := t.Call(ctx, "ping", nil)
	var rpcErr *jsonrpc.Error
	return err == nil || errors.As(err, &rpcErr)
}
