package workgroup

import (
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Close waits for every goroutine Go started, and Go refuses once Close
// has begun: no goroutine runs after Close returned, however the two race.
func TestCloseWaitsAndRefuses(t *testing.T) {
	for range 200 {
		var g Group
		var ran, afterClose atomic.Int32
		var closed atomic.Bool
		release := make(chan struct{})
		if !g.Go(func() { <-release; ran.Add(1) }) {
			t.Fatal("Go refused before Close")
		}
		var starters sync.WaitGroup
		for range 4 {
			starters.Go(func() {
				g.Go(func() {
					if closed.Load() {
						afterClose.Add(1)
					}
					ran.Add(1)
				})
			})
		}
		close(release)
		g.Close()
		closed.Store(true)
		starters.Wait()
		if afterClose.Load() != 0 {
			t.Fatalf("%d goroutines ran after Close returned", afterClose.Load())
		}
		if ran.Load() < 1 {
			t.Fatal("the goroutine started before Close did not run to its end")
		}
		if g.Go(func() {}) {
			t.Fatal("Go accepted work after Close")
		}
	}
}
