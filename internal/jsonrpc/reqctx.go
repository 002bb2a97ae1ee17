package jsonrpc

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// inflightRequest is one request of the peer's being handled, and the ctx
// its handler runs with. It is a context of its own, one allocation and a
// channel once something waits on Done, so that a request shares no lock
// or map with the connection's others (context.WithCancel under a
// connection-wide parent takes the parent's mutex on every request and
// allocates the value, the cancelCtx and its cancel func). It has no
// parent: the connection cancels every request still in flight when it
// ends (cancelInflight). AfterFunc lets a context derived from it (a
// call's timeout) hang on it as on a cancelCtx, without a goroutine of its
// own.
type inflightRequest struct {
	conn *Conn
	id   json.RawMessage // as the peer wrote it (Request.ID)

	mu     sync.Mutex
	done   chan struct{} // made by Done, closed by cancel
	err    error         // context.Canceled once cancelled
	afters []*afterFunc  // what AfterFunc registered, until cancel runs it

	// under conn.mu:
	prev, next *inflightRequest // in conn.running
	cancelled  bool             // the peer cancelled it: send no response
	answered   bool             // its response is written (or skipped)
	answerCh   chan struct{}    // made by Answered, closed once answered
}

// closedChan is Done's channel of a request cancelled before anything
// asked for it.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *Conn) newInflight(id json.RawMessage) *inflightRequest {
	return &inflightRequest{conn: c, id: id}
}

func (r *inflightRequest) Deadline() (time.Time, bool) { return time.Time{}, false }

func (r *inflightRequest) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		if r.err != nil {
			return closedChan
		}
		r.done = make(chan struct{})
	}
	return r.done
}

func (r *inflightRequest) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Value returns nil: a handler's ctx carries no values (what its request
// is comes to the handler as a Request).
func (r *inflightRequest) Value(any) any { return nil }

// cancel ends the request's ctx (context.Canceled); later calls do nothing.
func (r *inflightRequest) cancel() {
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		return
	}
	r.err = context.Canceled
	if r.done != nil {
		close(r.done)
	}
	afters := r.afters
	r.afters = nil
	r.mu.Unlock()
	for _, a := range afters {
		go a.f()
	}
}

// afterFunc is one function registered with AfterFunc.
type afterFunc struct{ f func() }

// AfterFunc arranges for f to run on a goroutine of its own once the
// request is cancelled, as context.AfterFunc does; stop unregisters it and
// reports whether that stopped it from running. The context package uses
// it to propagate the cancellation to contexts derived from the request.
func (r *inflightRequest) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	r.afters = append(r.afters, a)
	r.mu.Unlock()
	return func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, b := range r.afters {
			if b == a {
				r.afters = append(r.afters[:i], r.afters[i+1:]...)
				return true
			}
		}
		return false
	}
}

// answeredChan returns a channel closed once r's response is out. It is
// made only when asked for: only an open listen waits for it.
func (r *inflightRequest) answeredChan() <-chan struct{} {
	r.conn.mu.Lock()
	defer r.conn.mu.Unlock()
	if r.answerCh == nil {
		r.answerCh = make(chan struct{})
		if r.answered {
			close(r.answerCh)
		}
	}
	return r.answerCh
}

// markAnswered closes r's answered channel, if one was asked for.
func (r *inflightRequest) markAnswered() {
	r.conn.mu.Lock()
	r.answered = true
	ch := r.answerCh
	r.conn.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// link adds r to the requests being handled, c.running: every one of
// them, where c.inflight holds one per id (a peer may reuse an id while
// its request is in flight, and the first must still end with the
// connection). c.mu is held.
func (c *Conn) link(r *inflightRequest) {
	r.next = c.running
	if c.running != nil {
		c.running.prev = r
	}
	c.running = r
}

// unlink takes r out of c.running. c.mu is held.
func (c *Conn) unlink(r *inflightRequest) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		c.running = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	}
	r.prev, r.next = nil, nil
}

// cancelInflight cancels every request still being handled: the
// connection has ended.
func (c *Conn) cancelInflight() {
	var reqs []*inflightRequest
	c.mu.Lock()
	for r := c.running; r != nil; r = r.next {
		reqs = append(reqs, r)
	}
	c.mu.Unlock()
	for _, r := range reqs {
		r.cancel()
	}
}
