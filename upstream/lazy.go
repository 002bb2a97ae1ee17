package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream/catalogcache"
)

// Servers that cost nothing until used. A lazy server whose catalog is in
// the cache is not started: its names are listed from the cache (state
// sleeping), and the first request that needs it starts it (Wake), once
// however many arrive together. One with no cache yet is started to fill
// it, then stopped. Any server with an idleTimeout is stopped again, back to
// sleeping with its names still listed, once nothing has used it for that
// long; never while a request is in flight (a task listen counts as one
// while it is open), a subscription is open, or Events.KeepAwake says its
// tasks run.
//
// A wake that fails leaves the server restarting (or failed, past the
// restart policy) with its error, as any server that failed to start, and
// its names still listed: the next request after the policy's backoff tries
// again.

// lazyState is a Client's part in this, under Client.mu.
type lazyState struct {
	inflight int             // requests sent and not answered
	subs     map[string]bool // resources subscribed on the current connection
	lastUse  time.Time       // the last request's end (or the connection's start)
	idle     *time.Timer     // the idle check, when the spec has an idleTimeout

	fill      bool          // started only to fill the cache: stop once it is written
	filled    bool          // the cache is written and the fill's stop is on its way: the idle timer leaves it to that stop
	cacheOK   bool          // the last write (or read) of the cache succeeded
	warned    bool          // the cache's failure was logged
	cachedAt  time.Time     // when the cached catalog was discovered
	digest    [32]byte      // of what the cache holds, to skip rewriting it unchanged
	forceSave bool          // Options.RefreshCache: write even an unchanged catalog once
	supDone   chan struct{} // closed when the current supervisor returns

	wakeFailed bool      // the state is a failed wake's: the next request may try again
	failures   int       // failed wakes in a row
	nextWake   time.Time // not before: the restart policy's backoff

	// starts counts the wakes that started the server for a request, and
	// idleStops the stops of its idle timer (a start and stop only to fill
	// the cache are neither): how much laziness saves and what it costs,
	// for Status. Read without mu.
	starts, idleStops atomic.Int64
}

// specKey is a spec's key in the catalog cache. Which revision the trunk
// prefers is part of it: a server of both revisions answers each with its
// own handshake. The text of that part is in every cache file's key: it
// stays "preferLegacy" so that caches written before still match.
func specKey(spec config.Spec, prefer2025 bool) string {
	return catalogcache.Key(spec, fmt.Sprintf("preferLegacy=%v", prefer2025))
}

// fromCache puts a lazy server to sleep with its catalog from the cache,
// and reports whether it did; otherwise it is to be started (and, when the
// cache can be written, stopped once it has filled it).
func (c *Client) fromCache() bool {
	if c.opts.cache == nil {
		c.logger.Warn("lazy server: no catalog cache directory; starting it now")
		return false
	}
	if c.opts.refresh {
		c.mu.Lock()
		c.lazy.forceSave = true
		c.mu.Unlock()
		return false
	}
	e, err := c.opts.cache.Load(c.id, c.cacheKey)
	if err != nil {
		if !catalogcache.IsMiss(err) {
			c.logger.Warn("lazy server: ignoring its catalog cache; starting it to read the catalog again", logkey.Error, err)
		} else {
			c.logger.Info("lazy server: no cached catalog yet; starting it once to fill the cache")
		}
		c.mu.Lock()
		c.lazy.fill = true
		c.mu.Unlock()
		return false
	}
	init, cat, err := fromEntry(e)
	if err != nil {
		c.logger.Warn("lazy server: ignoring its catalog cache; starting it to read the catalog again", logkey.Error, err)
		c.mu.Lock()
		c.lazy.fill = true
		c.mu.Unlock()
		return false
	}
	c.mu.Lock()
	if c.state == StateClosed {
		c.mu.Unlock()
		return true
	}
	c.init, c.catalog = init, cat
	c.state, c.since = StateSleeping, time.Now()
	c.lazy.cacheOK, c.lazy.cachedAt, c.lazy.digest = true, e.StoredAt, e.Digest()
	c.mu.Unlock()
	c.logger.Info("lazy server: sleeping, listed from the catalog cache", "tools", len(cat.Tools), "cachedAt", e.StoredAt)
	c.settle()
	c.changed()
	return true
}

// fromEntry is the InitResult and Catalog a cache entry holds.
func fromEntry(e *catalogcache.Entry) (InitResult, Catalog, error) {
	caps, err := protocol.ParseServerCaps(e.Capabilities)
	if err != nil {
		return InitResult{}, Catalog{}, fmt.Errorf("%w: %v", catalogcache.ErrCorrupt, err)
	}
	init := InitResult{
		ProtocolVersion: e.ProtocolVersion,
		Capabilities:    caps,
		RawCapabilities: e.Capabilities,
		ServerInfo:      e.ServerInfo,
		Instructions:    e.Instructions,
	}
	var cat Catalog
	for s, raws := range [surfaceCount][]json.RawMessage{e.Tools, e.Prompts, e.Resources, e.Templates} {
		items := make([]Item, 0, len(raws))
		for _, raw := range raws {
			key, err := itemKey(surface(s), raw)
			if err != nil {
				return InitResult{}, Catalog{}, fmt.Errorf("%w: %s: %v", catalogcache.ErrCorrupt, surface(s), err)
			}
			items = append(items, Item{Key: key, Raw: raw})
		}
		if len(items) > 0 {
			*cat.list(surface(s)) = items
		}
	}
	return init, cat, nil
}

// discovered runs when every list of the current connection has been read
// (complete: none failed): the cache gets the catalog, and a server
// started only to fill it goes to sleep.
func (c *Client) discovered(complete bool) {
	if !complete || c.opts.cache == nil {
		c.mu.Lock()
		fill := c.lazy.fill
		c.lazy.fill = false
		c.mu.Unlock()
		if fill && c.opts.cache == nil {
			c.logger.Warn("lazy server: its catalog cannot be cached; it keeps running")
		}
		return
	}
	c.mu.Lock()
	if c.state != StateReady {
		c.mu.Unlock()
		return
	}
	e := &catalogcache.Entry{
		StoredAt:        time.Now(),
		ProtocolVersion: c.init.ProtocolVersion,
		Capabilities:    c.init.RawCapabilities,
		ServerInfo:      c.init.ServerInfo,
		Instructions:    c.init.Instructions,
	}
	for s := range surfaceCount {
		for _, it := range *c.catalog.list(s) {
			l := [surfaceCount]*[]json.RawMessage{&e.Tools, &e.Prompts, &e.Resources, &e.Templates}[s]
			*l = append(*l, it.Raw)
		}
	}
	digest := e.Digest()
	same := c.lazy.cacheOK && digest == c.lazy.digest && !c.lazy.forceSave
	fill := c.lazy.fill
	c.lazy.fill, c.lazy.forceSave = false, false
	c.mu.Unlock()
	if !same {
		err := c.opts.cache.Save(c.id, c.cacheKey, e)
		c.mu.Lock()
		c.lazy.cacheOK = err == nil
		if err == nil {
			c.lazy.cachedAt, c.lazy.digest = e.StoredAt, digest
		}
		warn := err != nil && !c.lazy.warned
		c.lazy.warned = c.lazy.warned || err != nil
		c.mu.Unlock()
		switch {
		case warn && c.spec.Lazy:
			c.logger.Warn("writing the catalog cache failed; the lazy server keeps running, as if it were not lazy", logkey.Error, err)
		case warn:
			c.logger.Warn("writing the catalog cache failed", logkey.Error, err)
		case err == nil:
			c.logger.Debug("catalog cached", "tools", len(e.Tools))
		}
		if err != nil {
			return
		}
	}
	if fill {
		c.mu.Lock()
		c.lazy.filled = true
		c.mu.Unlock()
		c.goWorker(func() { c.sleep("its catalog is cached", false) })
	}
}

// acquire returns the connection for one request, counted in flight until
// release; a sleeping server is woken first. A server that goes back to
// sleep between the wake and the request is woken again (a few times: an
// idle timeout shorter than a start would otherwise loop).
//
// A server that is being restarted is waited for (restartwait.go).
func (c *Client) acquire(ctx context.Context) (*wire, error) {
	b := restartBound{d: c.spec.Timeouts.Restart.D()}
	defer b.stop()
	for tries := 0; ; tries++ {
		c.mu.Lock()
		if c.goneLocked() {
			c.mu.Unlock()
			if _, err := c.awaitBack(ctx, &b); err != nil {
				return nil, err
			}
			tries--
			continue
		}
		if c.state == StateReady {
			c.lazy.inflight++
			t := c.t
			c.mu.Unlock()
			return t, nil
		}
		state, err := c.state, c.err
		wakeable := c.wakeableLocked()
		c.mu.Unlock()
		if !wakeable || tries == 3 {
			return nil, c.unavailable(state, err)
		}
		if err := c.Wake(ctx); err != nil {
			return nil, err
		}
	}
}

// release ends a request acquire counted.
func (c *Client) release() {
	c.mu.Lock()
	c.lazy.inflight--
	c.lazy.lastUse = time.Now()
	c.mu.Unlock()
}

// track keeps the resource subscriptions of the current connection: a
// server with one is never stopped for being idle.
func (c *Client) track(t *wire, method string, params json.RawMessage) {
	if method != "resources/subscribe" && method != "resources/unsubscribe" {
		return
	}
	uri, _ := rawjson.StringField(params, "uri")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t != t {
		return
	}
	if method == "resources/unsubscribe" {
		delete(c.lazy.subs, uri)
		return
	}
	if c.lazy.subs == nil {
		c.lazy.subs = map[string]bool{}
	}
	c.lazy.subs[uri] = true
}

// wakeableLocked reports whether a request may start the server: it
// sleeps, or its last wake failed and a retry is due.
func (c *Client) wakeableLocked() bool {
	switch c.state {
	case StateSleeping:
		return true
	case StateRestarting, StateFailed:
		return c.lazy.wakeFailed
	}
	return false
}

// Wake starts a sleeping server and returns once it is ready (its tools
// listed; the other lists follow in the background, as at any start), or
// its start failed, or ctx ended. However many callers wake it together,
// it is started once. A ready server returns at once; one that cannot be
// woken (disabled, closed, starting, restarting under its supervisor)
// returns the error a request to it gets.
func (c *Client) Wake(ctx context.Context) error {
	c.mu.Lock()
	state, stErr := c.state, c.err
	wakeable := c.wakeableLocked()
	c.mu.Unlock()
	if state == StateReady {
		return nil
	}
	if !wakeable {
		return c.unavailable(state, stErr)
	}
	ch := c.wakes.DoChan("wake", func() (any, error) {
		if !c.addWorker() {
			return nil, c.unavailable(StateClosed, nil)
		}
		defer c.workers.Done()
		return nil, c.wake()
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addWorker counts a goroutine Close waits for; false once closed.
func (c *Client) addWorker() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateClosed {
		return false
	}
	c.workers.Add(1)
	return true
}

// wake is the one start a Wake's callers share.
func (c *Client) wake() error {
	c.transition.Lock()
	defer c.transition.Unlock()
	c.mu.Lock()
	state, stErr := c.state, c.err
	if state == StateReady {
		c.mu.Unlock()
		return nil
	}
	if !c.wakeableLocked() {
		c.mu.Unlock()
		return c.unavailable(state, stErr)
	}
	if state != StateSleeping && time.Now().Before(c.lazy.nextWake) {
		c.mu.Unlock()
		return c.unavailable(state, stErr) // the backoff after a failed wake
	}
	c.mu.Unlock()

	began := time.Now()
	c.logger.Info("starting a sleeping server for a request")
	err := c.attempt(c.life)
	c.mu.Lock()
	if err != nil {
		c.lazy.failures++
		n := c.lazy.failures
		policy := c.opts.restart
		c.lazy.nextWake = time.Now().Add(policy.delay(n))
		next := StateRestarting
		if n > policy.MaxAttempts {
			next = StateFailed
		}
		closed := c.state == StateClosed
		if !closed {
			// The names stay listed (the catalog is kept): a request
			// after the backoff tries again.
			c.state, c.err, c.since = next, err, time.Now()
			c.lazy.wakeFailed = true
		}
		c.mu.Unlock()
		if !closed {
			c.changed()
		}
		return jsonrpc.Errorf(jsonrpc.CodeUnavailable, "%v", err)
	}
	c.lazy.wakeFailed, c.lazy.failures = false, 0
	if c.state == StateClosed {
		c.mu.Unlock()
		return c.unavailable(StateClosed, nil)
	}
	c.startSupervisorLocked(nil, nil)
	c.lazy.starts.Add(1)
	c.mu.Unlock()
	c.logger.Info("server woken", "in", time.Since(began).Round(time.Millisecond))
	return nil
}

// startSupervisorLocked hands the current connection (or, with err, a
// failed first attempt) to a new supervisor. c.mu is held and the Client
// is not closed.
func (c *Client) startSupervisorLocked(err error, decided chan struct{}) {
	done := make(chan struct{})
	c.lazy.supDone = done
	c.workers.Add(1)
	go func() {
		defer close(done)
		c.supervise(err, decided)
	}()
}

// armIdle (re)starts the idle check of a connection that just became
// ready.
func (c *Client) armIdle() {
	d := c.spec.IdleTimeout.D()
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lazy.lastUse = time.Now()
	if c.state == StateClosed {
		return
	}
	if c.lazy.idle == nil {
		c.lazy.idle = time.AfterFunc(d, c.idleCheck)
	} else {
		c.lazy.idle.Reset(d)
	}
}

// idleCheck stops the server if nothing has used it for its idleTimeout,
// else looks again when that could first be so.
func (c *Client) idleCheck() {
	d := c.spec.IdleTimeout.D()
	kept := c.keptAwake()
	c.mu.Lock()
	if c.state != StateReady {
		c.mu.Unlock()
		return // armed again when it is next ready
	}
	if left := d - time.Since(c.lazy.lastUse); c.busyLocked() || kept || left > 0 {
		if left <= 0 {
			left = d
			c.logger.Debug("idle timeout passed, but the server is in use: not stopping it", "inflight", c.lazy.inflight, "subscriptions", len(c.lazy.subs), "tasks", kept)
		}
		c.lazy.idle.Reset(left)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.goWorker(func() { c.sleep("idle for "+d.String(), true) })
}

// busyLocked reports what keeps a server up: a request in flight (a task
// listen is one while it is open), an open subscription, lists being read.
func (c *Client) busyLocked() bool {
	return c.lazy.inflight > 0 || len(c.lazy.subs) > 0 || c.refreshing
}

// keptAwake reports whether the Fleet's owner has work going on at the
// server (Events.KeepAwake): tasks the trunk knows to be running.
func (c *Client) keptAwake() bool {
	return c.opts.events.KeepAwake != nil && c.opts.events.KeepAwake(c.id)
}

// sleep stops a ready server that nothing uses, keeping its catalog
// listed; it reports whether it did. The supervisor sees the connection
// end and, finding the server asleep, does not restart it. idle says the
// idle timer asked, which Status counts; it leaves a server started only to
// fill the cache to the stop that follows the cache's write.
func (c *Client) sleep(why string, idle bool) bool {
	c.transition.Lock()
	defer c.transition.Unlock()
	kept := idle && c.keptAwake()
	c.mu.Lock()
	if idle {
		kept = kept || c.lazy.filled
	} else {
		c.lazy.filled = false
	}
	if c.state != StateReady || c.busyLocked() || kept {
		if c.state == StateReady && c.lazy.idle != nil {
			c.lazy.idle.Reset(c.spec.IdleTimeout.D())
		}
		c.mu.Unlock()
		return false
	}
	c.state, c.err, c.since = StateSleeping, nil, time.Now()
	if idle {
		c.lazy.idleStops.Add(1)
	}
	t, done := c.t, c.lazy.supDone
	c.lazy.subs = nil
	c.mu.Unlock()
	c.logger.Info("server stopped: sleeping until a request needs it", "why", why)
	if err := t.Close(c.life); err != nil && !errors.Is(err, context.Canceled) {
		c.logger.Debug("stopping the server", logkey.Error, err)
	}
	if done != nil {
		<-done
	}
	c.changed()
	return true
}

// asleepLocked reports whether the server was put to sleep: its
// connection's end is no loss.
func (c *Client) asleepLocked() bool { return c.state == StateSleeping }

// Listed reports whether the server's names are exported: it is ready,
// asleep, or a wake of it failed (its names stay, for the next request to
// try again).
func (c *Client) Listed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == StateReady || c.state == StateSleeping || c.lazy.wakeFailed && (c.state == StateRestarting || c.state == StateFailed)
}
