// Package workgroup runs the goroutines an owner must wait for when it
// closes, and refuses new ones once it has begun to: a sync.WaitGroup alone
// lets an Add race the Wait of Close, and a goroutine started then outlives
// its owner.
package workgroup

import "sync"

// A Group is the set of goroutines one owner started. The zero value is
// ready to use; a Group must not be copied after first use.
type Group struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs f on a goroutine of the Group and reports true; once Close has
// been called it runs nothing and reports false, and the caller does what
// f would have done at shutdown (fail the work it stood for).
func (g *Group) Go(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Go(f)
	return true
}

// Close refuses new goroutines, then waits for those running. Callers end
// what those goroutines wait on (cancel their context) before calling it.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
