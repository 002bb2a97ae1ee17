package jsonrpc

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// A message of hugeMessage bytes or more is followed by a garbage
// collection (so its garbage does not set the heap goal the next one meets);
// smaller ones are not.
func TestHugeMessageIsFollowedByACollection(t *testing.T) {
	leakCheck(t)
	huge := json.RawMessage(`"` + strings.Repeat("x", hugeMessage) + `"`)
	small := json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`)
	var result json.RawMessage
	h := handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return result, nil
	}}
	p := newPair(t, echo, h, nil)
	forced := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumForcedGC
	}

	result = small
	before := forced()
	for range 10 {
		if got, err := p.a.Call(testCtx(t), "x", nil); err != nil || len(got) != len(small) {
			t.Fatalf("Call = %d bytes, %v", len(got), err)
		}
	}
	if n := forced() - before; n != 0 {
		t.Errorf("%d collections after small messages, want none", n)
	}

	result = huge
	before = forced()
	if got, err := p.a.Call(testCtx(t), "x", nil); err != nil || string(got) != string(huge) {
		t.Fatalf("Call = %d bytes, %v", len(got), err)
	}
	// a's read loop collects after handing the response over: once it has
	// read the next one, that collection is done.
	result = small
	if _, err := p.a.Call(testCtx(t), "x", nil); err != nil {
		t.Fatal(err)
	}
	if n := forced() - before; n != 1 {
		t.Errorf("%d collections after one huge message, want 1", n)
	}
}

// Handler goroutines wait for the next request for handlerIdle at most:
// after a burst, the goroutine count falls back to what it was.
func TestIdleHandlersExit(t *testing.T) {
	leakCheck(t)
	p := newPair(t, echo, echo, nil)
	ctx := testCtx(t)
	if _, err := p.a.Call(ctx, "x", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(handlerIdle + 500*time.Millisecond)
	before := runtime.NumGoroutine()

	var wg sync.WaitGroup
	for range 3 * maxIdleHandlers {
		wg.Go(func() {
			if _, err := p.a.Call(ctx, "x", json.RawMessage(`{}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := p.b.idlers.Load(); n > maxIdleHandlers {
		t.Errorf("%d idle handler goroutines, want at most %d", n, maxIdleHandlers)
	}
	deadline := time.Now().Add(handlerIdle + waitLimit)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines %s after the burst, %d before it", n, handlerIdle+waitLimit, before)
	}
}
