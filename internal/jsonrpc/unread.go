package jsonrpc

import (
	"log/slog"
	"sync"
	"time"
)

// A peer that sends requests and does not read the answers (a host that
// stopped reading its stdin) would make a connection hold every answer in
// memory, each on the goroutine that waits to write it. With
// Options.MaxUnreadBytes the connection bounds that: at most
// Options.MaxHandled of the peer's requests are handled at once, counting
// each until its answer is written; one more waits for a place before its
// handler runs, and no request starts while the answers waiting to be
// written reach MaxUnreadBytes. Past either bound (MaxHandled requests
// waiting too, or the bytes) the read loop stops reading the peer: the
// peer feels the backpressure on its own writes instead of the connection
// buffering without end. Every answer is still written, in full, once the
// peer reads; then the connection reads on.

// answerGate is the bound; nil on a connection without one.
type answerGate struct {
	maxBytes   int64
	maxHandled int
	logger     *slog.Logger

	mu       sync.Mutex
	unread   int64         // bytes of answers handed to the writer and not yet written
	handled  int           // requests started and not yet answered
	waiting  int           // requests read and waiting to start
	moved    chan struct{} // closed and replaced when unread, handled or waiting fall
	maxSeen  int64         // the most unread ever was (Unanswered)
	maxCount int           // the most handled ever was
	// stopped, when set (by a test), is called each time the read loop
	// stops to wait.
	stopped func()
	warned  time.Time // the last warning that the peer does not read
}

// warnEvery spaces the warnings that the peer does not read.
const warnEvery = 5 * time.Second

func newAnswerGate(maxBytes int64, maxHandled int, logger *slog.Logger) *answerGate {
	if maxBytes <= 0 {
		return nil
	}
	if maxHandled <= 0 {
		maxHandled = DefaultMaxHandled
	}
	return &answerGate{maxBytes: maxBytes, maxHandled: maxHandled, logger: logger, moved: make(chan struct{})}
}

// DefaultMaxHandled is Options.MaxHandled when it is not set.
const DefaultMaxHandled = 64

// openLocked reports whether a request may start now.
func (g *answerGate) openLocked() bool {
	return g.handled < g.maxHandled && g.unread < g.maxBytes
}

// admit counts a request just read: started now (true), or waiting for a
// place (false, and the handler calls enter before it runs).
func (g *answerGate) admit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waiting == 0 && g.openLocked() {
		g.start()
		return true
	}
	g.waiting++
	return false
}

// start counts a request started; g.mu is held.
func (g *answerGate) start() {
	g.handled++
	g.maxCount = max(g.maxCount, g.handled)
}

// enter waits for a place for a request admit left waiting, until done
// (the request cancelled or the connection ended). It reports whether the
// request started; if not, it no longer counts.
func (g *answerGate) enter(done <-chan struct{}) bool {
	for {
		g.mu.Lock()
		if g.openLocked() {
			g.waiting--
			g.start()
			g.mu.Unlock()
			return true
		}
		moved := g.moved
		g.mu.Unlock()
		select {
		case <-moved:
		case <-done:
			g.mu.Lock()
			g.waiting--
			g.wakeLocked()
			g.mu.Unlock()
			return false
		}
	}
}

// owe counts an answer of size bytes handed to the writer.
func (g *answerGate) owe(size int64) {
	g.mu.Lock()
	g.unread += size
	g.maxSeen = max(g.maxSeen, g.unread)
	g.mu.Unlock()
}

// done ends a request that started: its answer of size bytes (0 for none)
// is written or failed.
func (g *answerGate) done(size int64) {
	g.mu.Lock()
	g.unread -= size
	g.handled--
	g.wakeLocked()
	g.mu.Unlock()
}

func (g *answerGate) wakeLocked() {
	close(g.moved)
	g.moved = make(chan struct{})
}

// awaitRead waits until the read loop may read on: fewer than maxHandled
// requests waiting, and the answers waiting to be written under maxBytes.
// Writes that fail (the peer gone) free the bytes as writes that succeed
// do, so a peer that goes away never leaves the read loop here.
func (g *answerGate) awaitRead() {
	for {
		g.mu.Lock()
		if g.waiting < g.maxHandled && g.unread < g.maxBytes {
			g.mu.Unlock()
			return
		}
		moved, stopped := g.moved, g.stopped
		warn := time.Since(g.warned) >= warnEvery
		if warn {
			g.warned = time.Now()
		}
		handled, waiting, unread := g.handled, g.waiting, g.unread
		g.mu.Unlock()
		if warn {
			g.logger.Warn("the peer is not reading its answers: reading nothing more from it until it does",
				"handled", handled, "waiting", waiting, "unreadBytes", unread)
		}
		if stopped != nil {
			stopped()
		}
		<-moved
	}
}

// Unanswered says what the connection holds for a peer that does not read
// (Options.MaxUnreadBytes): the requests being handled or waiting to be,
// and the bytes of answers waiting to be written, now and at most so far.
// All zero on a connection without the bound.
type Unanswered struct {
	Handled, Waiting, MaxHandled int
	UnreadBytes, MaxUnreadBytes  int64
}

// Unanswered reports the connection's bound's counts (see the type).
func (c *Conn) Unanswered() Unanswered {
	g := c.gate
	if g == nil {
		return Unanswered{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return Unanswered{Handled: g.handled, Waiting: g.waiting, MaxHandled: g.maxCount, UnreadBytes: g.unread, MaxUnreadBytes: g.maxSeen}
}
