package proxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// runGate bounds the code-mode runs running at once across the trunk
// (trunk.codeMode.maxRuns): each is a runner process of up to
// maxMemoryBytes, so the number at once bounds their memory together.
// Runs past the bound wait in arrival order; a run that ends hands its
// place to the first of them.
type runGate struct {
	mu      sync.Mutex
	limit   int               // the bound the latest run was started under (a reload may change it)
	running int               // runs holding a place
	queue   []chan struct{}   // the runs waiting, first first; closed when handed a place
	onQueue func(waiting int) // told the runs waiting when one starts or gives up waiting (tests)
}

// run runs a program under the gate: it waits for a place, for at most
// the run's wall time (what it waited is taken from it) and while ctx
// lasts, then runs it with run.
func (g *runGate) run(ctx context.Context, limit int, code string, o child.Options,
	run func(context.Context, string, child.Options) (child.Result, error)) (child.Result, error) {
	start := time.Now()
	if err := g.enter(ctx, limit, o.Budgets.WallTime); err != nil {
		return child.Result{}, err
	}
	defer g.leave()
	if o.Budgets.WallTime > 0 {
		o.Budgets.WallTime -= time.Since(start)
		if o.Budgets.WallTime <= 0 {
			return child.Result{}, g.full(limit, time.Since(start))
		}
	}
	return run(ctx, code, o)
}

// enter takes a place, waiting its turn for at most wait (no bound when
// 0) and while ctx lasts.
func (g *runGate) enter(ctx context.Context, limit int, wait time.Duration) error {
	g.mu.Lock()
	g.limit = max(1, limit)
	g.handOn()
	if g.running < g.limit && len(g.queue) == 0 {
		g.running++
		g.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	g.queue = append(g.queue, turn)
	g.told(len(g.queue))
	var timeout <-chan time.Time
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		timeout = timer.C
	}
	var err error
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timeout:
		err = g.full(limit, wait)
	}
	g.mu.Lock()
	if i := slices.Index(g.queue, turn); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
		g.told(len(g.queue))
		return err
	}
	// Handed a place as the wait ended: pass it on.
	g.running--
	g.handOn()
	g.mu.Unlock()
	return err
}

// told unlocks g.mu and tells onQueue of the runs waiting.
func (g *runGate) told(waiting int) {
	onQueue := g.onQueue
	g.mu.Unlock()
	if onQueue != nil {
		onQueue(waiting)
	}
}

// leave gives a place back, to the first run waiting if any.
func (g *runGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	g.handOn()
}

// handOn gives the places free under the limit to the runs waiting, in
// their order. g.mu is held.
func (g *runGate) handOn() {
	for g.running < g.limit && len(g.queue) > 0 {
		close(g.queue[0])
		g.queue = g.queue[1:]
		g.running++
	}
}

// full is the error of a run that found no place in wait.
func (g *runGate) full(limit int, wait time.Duration) error {
	return fmt.Errorf("no run could start: trunk.codeMode.maxRuns (%d) runs were running at once for the whole of this run's wall time (%s); try again later, or raise trunk.codeMode.maxRuns", limit, wait.Round(time.Millisecond))
}
