// Package gopool runs functions on goroutines kept from earlier ones. A
// fresh goroutine starts with a small stack and grows it, copying it each
// time, as the function it runs goes deeper: work that goes through the
// trunk's routing or net/http's client on a goroutine of its own paid for
// that growth every time (runtime.newstack was a tenth of a stateless
// HTTP request's CPU in BenchmarkStatelessCall). A goroutine kept keeps
// the stack it grew.
package gopool

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool runs each function given to Go on a goroutine waiting for work, or
// on a new one when none is.
type Pool struct {
	work    chan func()     // to a goroutine waiting for its next function
	waiting atomic.Int32    // goroutines waiting on work
	stop    <-chan struct{} // closed when the owner closes: the idle ones exit
	wg      *sync.WaitGroup // counts the goroutines, for the owner to wait on
}

// maxIdle and idleFor bound the goroutines kept: at most this many wait,
// each until it has had nothing to run for a whole period of idleFor
// (between one and two periods after its last function).
const (
	maxIdle = 32
	idleFor = time.Second
)

// New returns a pool whose goroutines are counted in wg (Add when one
// starts, Done when it ends) and whose idle ones exit once stop is closed.
// The owner closes stop before it waits on wg.
func New(stop <-chan struct{}, wg *sync.WaitGroup) *Pool {
	return &Pool{work: make(chan func()), stop: stop, wg: wg}
}

// Go runs f on an idle goroutine, or on a new one when none is waiting.
func (r *Pool) Go(f func()) {
	select {
	case r.work <- f:
		return
	default:
	}
	r.wg.Add(1)
	go r.loop(f)
}

// loop runs f, then what Go passes it while it waits idle. Its timer runs
// on through the functions and is armed again only when it fires after one,
// so that a busy goroutine does not reset a timer per function.
func (r *Pool) loop(f func()) {
	defer r.wg.Done()
	var idle *time.Timer
	defer func() {
		if idle != nil {
			idle.Stop()
		}
	}()
	for {
		f()
		if r.waiting.Add(1) > maxIdle {
			r.waiting.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(idleFor)
		}
		var ok bool
		if f, ok = r.next(idle); !ok {
			return
		}
	}
}

// next waits, as one of r.waiting, for the next function to run, until
// idle fires with nothing run since it was armed, or stop is closed. The
// caller has just run one: a firing that finds it waiting for the first
// time since arms idle again.
func (r *Pool) next(idle *time.Timer) (func(), bool) {
	defer r.waiting.Add(-1)
	for ran := true; ; ran = false {
		select {
		case f := <-r.work:
			return f, true
		case <-r.stop:
			return nil, false
		case <-idle.C:
			if !ran {
				return nil, false
			}
			idle.Reset(idleFor)
		}
	}
}
