package httpserve

import (
	"testing"
	"time"
)

// Once sessions that held a lot together have left, the pool gives the
// memory back to the system, once; sessions that held little never cost
// a collection.
func TestPoolReleasesMemoryAfterABurst(t *testing.T) {
	p := newPool(1 << 40)
	released := make(chan struct{}, 4)
	p.memory.release = func() { released <- struct{}{} }

	small, _, _ := budgetRouter(p, 1<<40, 1<<40)
	for i := range 10 {
		_ = small.WriteMessage(note(i, 1<<10))
	}
	small.endAll("done")
	if n := p.memory.count.Load(); n != 0 {
		t.Fatalf("%d releases after a session that held 10 KiB", n)
	}

	big, _, _ := budgetRouter(p, 1<<40, 1<<40)
	for i := range 20 {
		_ = big.WriteMessage(note(i, 1<<20))
	}
	other, _, _ := budgetRouter(p, 1<<40, 1<<40)
	big.endAll("done")
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("20 MiB held and let go, and the memory was not released")
	}
	other.endAll("done") // within releaseEvery, and nothing more held since
	if n := p.memory.count.Load(); n != 1 {
		t.Fatalf("%d releases for one burst, want 1", n)
	}
}
