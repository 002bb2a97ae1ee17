package httpserve

import (
	"sync"
	"sync/atomic"
	"time"
)

// runners runs sessions, each on a goroutine kept from an earlier session
// when one is idle. A stateless request gets a session of its own, and its
// request runs on that session's goroutine (jsonrpc.Options.InlineRequests),
// through the trunk's routing: a fresh goroutine starts with a small stack
// and grew it, copying it each time, on every such request; that was a
// tenth of a stateless request's CPU (BenchmarkStatelessCall, runtime.newstack).
// A goroutine kept keeps the stack it grew.
type runners struct {
	work    chan func()     // to a goroutine waiting for its next session
	waiting atomic.Int32    // goroutines waiting on work
	stop    <-chan struct{} // closed when the handler closes: the idle ones exit
	wg      *sync.WaitGroup // counts the goroutines, for Close to wait on
}

// maxIdleRunners and runnerIdle bound the goroutines kept: at most this
// many wait, each until it has had nothing to run for a whole period of
// runnerIdle (between one and two periods after its last session).
const (
	maxIdleRunners = 32
	runnerIdle     = time.Second
)

func newRunners(stop <-chan struct{}, wg *sync.WaitGroup) *runners {
	return &runners{work: make(chan func()), stop: stop, wg: wg}
}

// run runs f on an idle goroutine, or on a new one when none is waiting.
func (r *runners) run(f func()) {
	select {
	case r.work <- f:
		return
	default:
	}
	r.wg.Add(1)
	go r.loop(f)
}

// loop runs f, then what run passes it while it waits idle. Its timer runs
// on through the sessions and is armed again only when it fires after one,
// so that a busy goroutine does not reset a timer per request.
func (r *runners) loop(f func()) {
	defer r.wg.Done()
	var idle *time.Timer
	defer func() {
		if idle != nil {
			idle.Stop()
		}
	}()
	for {
		f()
		if r.waiting.Add(1) > maxIdleRunners {
			r.waiting.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(runnerIdle)
		}
		var ok bool
		if f, ok = r.next(idle); !ok {
			return
		}
	}
}

// next waits, as one of r.waiting, for the next session to run, until idle
// fires with nothing run since it was armed, or the handler closes. The
// caller has just run one: a firing that finds it waiting for the first
// time since arms idle again.
func (r *runners) next(idle *time.Timer) (func(), bool) {
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
			idle.Reset(runnerIdle)
		}
	}
}
