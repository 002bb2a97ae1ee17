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

// A function given after another has ended runs on the goroutine that
// ran the first (which keeps the stack it grew), and stop ends the idle
// goroutines.
func TestPoolReusesTheIdleGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	r := New(stop, &wg)
	ids := make(chan string, 2)
	r.Go(func() { ids <- goroutineID() })
	first := <-ids
	waitIdle(t, r, 1)
	r.Go(func() { ids <- goroutineID() })
	if second := <-ids; second != first {
		t.Errorf("the second function ran on goroutine %s, not on the idle %s", second, first)
	}
	waitIdle(t, r, 1)
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
