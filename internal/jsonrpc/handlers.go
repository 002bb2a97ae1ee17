package jsonrpc

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// The peer's requests: each is handled on a goroutine of its own (a pooled
// one when one is idle), with a ctx that ends when the peer cancels it or
// the connection ends, and is answered once its handler returns.

func (c *Conn) startHandler(m message) {
	j := c.register(m)
	if c.gate != nil {
		j.gated, j.waits = true, !c.gate.admit()
	}
	select {
	case c.idle <- j: // a handler goroutine done with its last request takes it
		return
	default:
	}
	c.handlers.Add(1)
	go c.handle(j)
}

// register makes m a request being handled, cancelled with the Conn.
func (c *Conn) register(m message) handlerJob {
	req := c.newInflight(m.ID)
	key := string(m.ID)
	c.mu.Lock()
	c.inflight[key] = req
	c.link(req)
	c.mu.Unlock()
	return handlerJob{req: req, key: key, m: m}
}

// inlineJob registers m for Answer's caller to run (runInline), counted
// in c.handlers now, while recvMu is held. It is not gated: the
// exchange that runs it waits for its answer.
func (c *Conn) inlineJob(m message) handlerJob {
	j := c.register(m)
	c.handlers.Add(1)
	return j
}

// handlerJob is one request from the peer for a handler goroutine.
type handlerJob struct {
	req *inflightRequest
	key string
	m   message
	// gated: the connection bounds its answers (unread.go); waits: the
	// request waits for a place before its handler runs.
	gated, waits bool
}

// maxIdleHandlers and handlerIdle bound the handler goroutines that wait
// for the next request once theirs is answered: at most this many, each
// until it has had nothing to do for a whole period of handlerIdle (so for
// between one and two periods after its last request). A goroutine that
// takes over a request keeps the stack it grew on the last one, so that a
// request does not pay for growing (copying) a fresh goroutine's stack.
const (
	maxIdleHandlers = 32
	handlerIdle     = time.Second
)

// handle runs j and then the requests startHandler passes it while it
// waits idle, until a period of handlerIdle passes without one,
// maxIdleHandlers others are already waiting, or the read loop ends. Its
// timer runs on through the requests and is armed again only when it
// fires after one, so that a request costs no timer reset (a lock and a
// timer-heap update).
func (c *Conn) handle(j handlerJob) {
	defer c.handlers.Done()
	var idle *time.Timer
	defer func() {
		if idle != nil {
			idle.Stop()
		}
	}()
	for {
		c.runHandler(j)
		if c.idlers.Add(1) > maxIdleHandlers {
			c.idlers.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(handlerIdle)
		}
		if !c.waitIdle(idle, &j) {
			return
		}
	}
}

// waitIdle waits, as one of c.idlers, for the next request for this
// handler goroutine (into j, true) until idle fires with nothing handled
// since it was armed, or the read loop ends (false). The caller has just
// handled a request: a firing that finds it waiting for the first time
// since arms idle again.
func (c *Conn) waitIdle(idle *time.Timer, j *handlerJob) bool {
	defer c.idlers.Add(-1)
	for handled := true; ; handled = false {
		select {
		case *j = <-c.idle:
			return true
		case <-c.readDone:
			return false
		case <-idle.C:
			if !handled {
				return false
			}
			idle.Reset(handlerIdle)
		}
	}
}

// runHandler answers one request, unless the peer cancelled it.
func (c *Conn) runHandler(j handlerJob) {
	req := j.req
	defer req.markAnswered()
	started := !j.waits || c.gate.enter(req.Done())
	var result json.RawMessage
	var err error
	if started {
		result, err = c.callHandler(req, Request{ID: req.id, Method: j.m.Method, Params: j.m.Params, inflight: req})
	} else {
		err = Errorf(CodeRequestCancelled, "%s was cancelled before it started", j.m.Method)
	}
	req.cancel()
	c.mu.Lock()
	delete(c.inflight, j.key)
	c.unlink(req)
	skip := req.cancelled
	c.mu.Unlock()
	var owed int64
	if j.gated && started {
		defer func() { c.gate.done(owed) }()
	}
	if skip {
		return
	}
	var rpcErr *Error
	if err != nil {
		rpcErr = AsError(err)
	}
	if j.gated && started {
		owed = int64(len(result) + len(j.m.ID) + len(`{"jsonrpc":"2.0","id":,"result":}`) + 1)
		if rpcErr != nil {
			owed += int64(min(len(rpcErr.Message), MaxErrorMessage) + len(rpcErr.Data) + 64)
		}
		c.gate.owe(owed)
	}
	if werr := c.writeResponse(j.m.ID, result, rpcErr); werr != nil {
		c.logger.Debug("writing a response failed", "method", logkey.Clip(j.m.Method), "error", werr)
	}
}

// callHandler turns a handler panic into an internal error, so one bad
// request cannot take the whole connection down.
func (c *Conn) callHandler(ctx context.Context, req Request) (result json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("request handler panicked", "method", logkey.Clip(req.Method), "panic", p)
			err = Errorf(CodeInternalError, "internal error handling %s", req.Method)
		}
	}()
	return c.handler.HandleRequest(ctx, req)
}

func (c *Conn) peerCancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || !hasID(p.RequestID) {
		return
	}
	c.mu.Lock()
	req, ok := c.inflight[string(p.RequestID)]
	if ok {
		req.cancelled = true
	}
	c.mu.Unlock()
	if ok {
		req.cancel()
	}
}
