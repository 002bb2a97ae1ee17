package gopool

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// goroutineID is the calling goroutine's number, from its stack header
// ("goroutine 42 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// waitIdle waits until n goroutines of r wait for work.
func waitIdle(t *testing.T, r *Pool, n int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines idle, want %d", r.waiting.Load(), n)
		}
		runtime.Gosched()
	}
}

// waitSomeIdle waits until a goroutine of r waits for work.
func waitSomeIdle(t *testing.T, r *Pool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.waiting.Load() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no goroutine idle")
		}
		runtime.Gosched()
	}
}

// A function given after another has ended runs on the goroutine that
// ran the first (which keeps the stack it grew), and stop ends the idle
// goroutines.
func TestPoolReusesTheIdleGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	r := New(stop, &wg)
	ids := make(chan string, 1)
	r.Go(func() { ids <- goroutineID() })
	ran := map[string]bool{<-ids: true}
	// A goroutine counts itself idle just before it waits for work, and
	// one left idle long enough on a loaded machine exits: a function
	// given in either window starts a goroutine of its own, which the
	// pool allows. What it must do is hand a later one to a goroutine it
	// kept, so the test gives functions until one runs on a goroutine
	// seen before.
	reused := false
	for try := 0; try < 50 && !reused; try++ {
		waitSomeIdle(t, r)
		r.Go(func() { ids <- goroutineID() })
		id := <-ids
		reused = ran[id]
		ran[id] = true
	}
	if !reused {
		t.Errorf("50 functions given one at a time ran on %d goroutines, none on one the pool kept", len(ran))
	}
	close(stop)
	waitGroup(t, &wg)
}

// Sessions that run at once each get a goroutine; once they end, at most
// maxIdle of those goroutines stay.
func TestPoolKeepsAtMostMaxIdle(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	r := New(stop, &wg)
	release := make(chan struct{})
	var started sync.WaitGroup
	n := maxIdle + 8
	started.Add(n)
	for range n {
		r.Go(func() {
			started.Done()
			<-release
		})
	}
	started.Wait()
	if got := r.waiting.Load(); got != 0 {
		t.Fatalf("%d idle while every goroutine runs a function", got)
	}
	close(release)
	waitIdle(t, r, maxIdle)
	close(stop)
	waitGroup(t, &wg)
}

func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the goroutines did not exit after stop")
	}
}
