package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/upstream/catalogcache"
	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio"
	"golang.org/x/sync/singleflight"
)

// State is where a server is in its life.
type State string

const (
	StateStarting   State = "starting"   // connecting and discovering
	StateReady      State = "ready"      // answering requests
	StateSleeping   State = "sleeping"   // not running, its names listed from the catalog cache; the next request starts it
	StateRestarting State = "restarting" // went away or failed to start; Err says why; a restart is due
	StateFailed     State = "failed"     // did not start, or went away, and will not be restarted; Err says why
	StateDisabled   State = "disabled"   // "disabled": true in the config
	StateClosed     State = "closed"     // shut down by the trunk
)

// Events are how servers report to whoever aggregates them. A nil field
// ignores that event. Callbacks run on a server's read loop or a worker of
// its own: they must not block on the same server.
type Events struct {
	// Changed: a server's state or catalog changed.
	Changed func(server string)
	// Notification: a server sent a notification the Client does not handle
	// itself (progress, log messages, resource updates, ...).
	Notification func(server, method string, params json.RawMessage)
	// Request: a server asked its client something (sampling, elicitation,
	// roots). ctx ends when the server cancels the request.
	Request func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error)
	// KeepAwake: work the aggregate knows of goes on at the server between
	// requests (its tasks running), so its idleTimeout must not stop it.
	// Called without the Client's lock.
	KeepAwake func(server string) bool
}

// clientOptions are what a Fleet gives each of its clients.
type clientOptions struct {
	logger        *slog.Logger
	events        Events
	version       string
	capabilities  json.RawMessage
	restart       RestartPolicy
	prefer2025    bool                                                              // see Options.Prefer2025
	cache         *catalogcache.Store                                               // nil: no cache directory (lazy servers start eagerly)
	refresh       bool                                                              // see Options.RefreshCache
	dial          Dialer                                                            // see Options.Dial
	authorization func(ctx context.Context, server, refused string) (string, error) // see Options.Authorization
	maxMessage    int                                                               // see Options.MaxMessageBytes
}

// Client is one upstream server: its connection, handshake, catalog and
// calls. It owns its transport (and so its process) from start to Close.
type Client struct {
	// fixed at creation
	id       string
	spec     config.Spec
	opts     clientOptions
	logger   *slog.Logger
	life     context.Context // ends at Close
	stop     context.CancelFunc
	settled  chan struct{} // closed once the first discovery finished or start failed
	settleMu sync.Once
	workers  sync.WaitGroup // the supervisor and refresh goroutines
	closeMu  sync.Once
	restarts atomic.Int64 // restarts so far
	stats    callStats
	guard    *guard // maxInFlight, maxQueued, breaker

	clientInfoOnce sync.Once // clientInfoRaw: the clientInfo every request to a stateless server carries
	clientInfoRaw  json.RawMessage
	logLevel       atomic.Pointer[json.RawMessage] // at the stateless revision: the level logging/setLevel asked for

	cacheKey string // the spec's key in the catalog cache

	// Lazy start and idle stop (lazy.go). transition serialises a start
	// or wake (up to handing the connection to its supervisor) with a stop,
	// so a request that arrives while the server is being stopped waits,
	// then starts it again, and a stop waits for the supervisor of the
	// connection it ends.
	transition sync.Mutex
	wakes      singleflight.Group

	mu         sync.Mutex
	lazy       lazyState // under mu
	state      State
	err        error
	t          *wire         // the current connection
	moved      chan struct{} // closed and replaced at each change (changed): what a request waiting for a restart waits on
	init       InitResult
	catalog    Catalog
	announced  [surfaceCount]bool   // dirty lists the server said changed (list_changed), not the trunk's own reads
	relisted   [surfaceCount]uint64 // see Catalog.Relisted: kept across restarts, which clear catalog
	dirty      [surfaceCount]bool   // lists to read again
	refreshing bool                 // a refresh worker is running
	since      time.Time            // when state last changed
}

func newClient(id string, spec config.Spec, opts clientOptions) *Client {
	life, stop := context.WithCancel(context.Background())
	c := &Client{
		id:      id,
		spec:    spec,
		opts:    opts,
		logger:  opts.logger.With(logkey.Server, id),
		life:    life,
		stop:    stop,
		settled: make(chan struct{}),
		moved:   make(chan struct{}),
		state:   StateStarting,
		since:   time.Now(),
		guard:   newGuard(id, spec),
	}
	c.cacheKey = specKey(spec, opts.prefer2025)
	switch {
	case spec.Disabled:
		c.state = StateDisabled
		c.settle()
	case spec.Invalid != nil:
		// Its entry cannot be used (an unset variable, a bad field): failed
		// from the start, named wherever failures are, never started.
		c.state, c.err = StateFailed, spec.Invalid
		c.settle()
	}
	return c
}

// startable reports whether a spec is started at all: not disabled, and
// its entry usable.
func startable(spec config.Spec) bool { return !spec.Disabled && spec.Invalid == nil }

// Name is the server's identifier: its config name, normalised for use in
// exported names and URIs.
func (c *Client) Name() string { return c.id }

// Spec is the configuration the server was started from.
func (c *Client) Spec() config.Spec { return c.spec }

// State returns the server's state and, when it failed, why.
func (c *Client) State() (State, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.err
}

// Init returns what the server said in its initialize response.
func (c *Client) Init() InitResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.init
}

// Catalog returns the server's current lists. The slices are shared and must
// not be modified.
func (c *Client) Catalog() Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	cat := c.catalog
	cat.Relisted = c.relisted
	return cat
}

// Settled is closed once the server finished its first discovery (all four
// lists it offers), or failed to start, or is disabled.
func (c *Client) Settled() <-chan struct{} { return c.settled }

func (c *Client) settle() { c.settleMu.Do(func() { close(c.settled) }) }

// Call is CallWith for a request of the trunk's own (no CallOptions).
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.callWith(ctx, CallOptions{}, method, params)
}

// callWith sends a request to the server, bounded by the server's call
// timeout; a server at the stateless revision is told opts, the facts of
// the host request it is made for.
// A sleeping server is started first (see Wake). An error from the server
// comes back as the *jsonrpc.Error it sent; a server that is not available
// gives a CodeUnavailable error naming it.
//
// A request that finds the server restarting, or whose connection ended
// before the request reached it, waits for the server to be back
// (timeouts.restart) and is sent then; one in flight when the server went
// away fails, saying so.
//
// A server with maxInFlight takes the call when a slot is free, and
// otherwise has it wait its turn (within ctx and timeouts.call) or refuses
// it when maxQueued others wait already; one whose breaker is open refuses
// it at once, naming the server and when it is tried again. Each refusal
// is a CodeUnavailable error.
func (c *Client) callWith(ctx context.Context, opts CallOptions, method string, params json.RawMessage) (json.RawMessage, error) {
	tk, err := c.guard.admit(ctx, c.spec.Timeouts.Call.D())
	if err != nil {
		return nil, err
	}
	for tries := 1; ; tries++ {
		res, sent, o, err := c.callOnce(ctx, opts, method, params)
		if sent || tries == 3 || ctx.Err() != nil {
			c.guard.done(tk, o, err)
			return res, err
		}
	}
}

// callOnce is one try of Call; sent is false when the request did not
// reach the server because its connection had ended, so that it may be
// sent again once the server is back. o is what the try says of the
// server, for its breaker.
func (c *Client) callOnce(ctx context.Context, opts CallOptions, method string, params json.RawMessage) (_ json.RawMessage, sent bool, o outcome, _ error) {
	t, err := c.acquire(ctx)
	if err != nil {
		// Not there to answer: away past timeouts.restart, failed, closed.
		return nil, true, c.outcome(ctx, errNoAnswer), err
	}
	defer c.release()
	timeout := c.spec.Timeouts.Call.D()
	began := time.Now()
	res, err := t.callWith(ctx, opts, timeout, method, params)
	if errors.Is(err, jsonrpc.ErrNotSent) && endsSoon(ctx, t) {
		return nil, false, c.outcome(ctx, err), c.callError(ctx, t, method, timeout, err)
	}
	c.stats.record(time.Since(began), err != nil)
	if err == nil {
		c.track(t, method, params)
		return res, true, answered, nil
	}
	return nil, true, c.outcome(ctx, err), c.callError(ctx, t, method, timeout, err)
}

// outcome classifies a try's error, before callError words it: an error
// the server sent, or an answer over the size limit, is an answer; the
// caller's own end says nothing of the server; anything else (the call
// timeout, a transport error, the server not coming back) is none.
func (c *Client) outcome(ctx context.Context, err error) outcome {
	var rpcErr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return abandoned
	case errors.As(err, &rpcErr), overlongAnswer(err):
		return answered
	}
	return noAnswer
}

// errNoAnswer stands for a server that was not there to take a call.
var errNoAnswer = errors.New("no answer")

// endsSoon reports whether t's connection has ended or ends shortly (a
// write to a process that died fails before its output is seen to end).
func endsSoon(ctx context.Context, t Transport) bool {
	select {
	case <-t.Done():
		return true
	case <-ctx.Done():
		return false
	case <-time.After(stdio.OutputGrace + time.Second):
		return false
	}
}

// Notify sends a notification to the server if it is ready.
func (c *Client) Notify(method string, params json.RawMessage) error {
	c.mu.Lock()
	t, state, stErr := c.t, c.state, c.err
	c.mu.Unlock()
	if state != StateReady {
		return c.unavailable(state, stErr)
	}
	return t.Notify(method, params)
}

func (c *Client) callError(ctx context.Context, t Transport, method string, timeout time.Duration, err error) error {
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return err
	case errors.Is(err, context.DeadlineExceeded) && (ctx.Err() != nil || timeout > 0):
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q: %s timed out after %s", c.id, method, timeout)
	case errors.Is(err, context.Canceled):
		return err
	case overlongAnswer(err):
		// Kept as the *jsonrpc.OverlongLineError, for the proxy to name the
		// item and the setting.
		return fmt.Errorf("server %q: %s: %w", c.id, method, err)
	case errors.Is(err, jsonrpc.ErrClosed) && !errors.Is(err, jsonrpc.ErrNotSent):
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q crashed while %s was in flight: %v", c.id, method, c.exitError(t))
	case errors.Is(err, jsonrpc.ErrClosed):
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is not available: %v", c.id, c.exitError(t))
	case writeFailed(err):
		// The server stopped reading, most likely because it is exiting and
		// the read side has not noticed yet: say how it ended if it did.
		if exit := c.exitError(t); exit != nil {
			err = exit
		}
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is not available: %v", c.id, err)
	}
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q: %s: %v", c.id, method, err)
}

// overlongAnswer reports an answer the server sent over the read limit
// (not a connection that ended over a line without end).
func overlongAnswer(err error) bool {
	var over *jsonrpc.OverlongLineError
	return errors.As(err, &over) && !errors.Is(err, jsonrpc.ErrClosed)
}

// writeFailed reports whether err is a failed write to the server's input,
// such as EPIPE from a server that exited or closed its stdin.
func writeFailed(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write"
}

// exitError waits briefly for a transport that is going away to say how it
// ended (exit status, last stderr lines).
func (c *Client) exitError(t Transport) error {
	select {
	case <-t.Done():
	case <-time.After(stdio.OutputGrace + time.Second):
	}
	return t.Err()
}

func (c *Client) unavailable(state State, err error) error {
	switch state {
	case StateFailed:
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is not available: %v", c.id, err)
	case StateRestarting:
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is restarting after: %v", c.id, err)
	case StateDisabled:
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is disabled in the config", c.id)
	case StateClosed:
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q has been shut down", c.id)
	case StateSleeping:
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is sleeping and could not be started", c.id)
	default:
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "server %q is still starting", c.id)
	}
}

// setState moves the server to state and reports the change.
func (c *Client) setState(state State, err error) {
	c.mu.Lock()
	if c.state == StateClosed {
		c.mu.Unlock()
		return
	}
	c.state, c.err, c.since = state, err, time.Now()
	if state != StateReady && state != StateSleeping {
		c.catalog = Catalog{}
	}
	c.mu.Unlock()
	c.changed()
}

func (c *Client) changed() {
	if c.opts.events.Changed != nil {
		c.opts.events.Changed(c.id)
	}
	c.mu.Lock()
	close(c.moved)
	c.moved = make(chan struct{})
	c.mu.Unlock()
}

// Close shuts the server down (see the transport's Close for the order) and
// waits for every goroutine the Client started. Idempotent and safe to call
// concurrently.
func (c *Client) Close(ctx context.Context) error {
	var err error
	c.closeMu.Do(func() {
		c.mu.Lock()
		c.state, c.since = StateClosed, time.Now()
		c.catalog = Catalog{}
		t := c.t
		if c.lazy.idle != nil {
			c.lazy.idle.Stop()
		}
		c.mu.Unlock()
		c.stop()
		if t != nil {
			err = t.Close(ctx)
		}
		c.workers.Wait()
		c.settle()
	})
	return err
}
