package upstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/upstream/catalogcache"
)

// lazySpec is a normal test server marked lazy, with idle as its
// idleTimeout (0: none).
func (h *harness) lazySpec(name string, idle time.Duration) config.Spec {
	s := h.spec(name, modeNormal)
	s.Lazy = true
	s.IdleTimeout = config.Duration(idle)
	return s
}

// starts counts the processes of server name started so far.
func (h *harness) starts(name string) int {
	n := 0
	for _, l := range h.sharedLog() {
		if l == "start "+name {
			n++
		}
	}
	return n
}

func awaitState(t *testing.T, c *Client, want State) {
	t.Helper()
	pollUntil(t, "server "+c.Name()+" "+string(want), func() bool {
		st, _ := c.State()
		return st == want
	})
}

// fillCache runs a lazy server with no cache: it starts once, writes its
// catalog to the cache and goes to sleep, its process gone and its names
// still listed.
func (h *harness) fillCache(spec config.Spec) {
	h.t.Helper()
	host := h.host(nil)
	if err := host.StartAll(ctxFor(h.t), []config.Spec{spec}); err != nil {
		h.t.Fatal(err)
	}
	c, _ := host.Client(spec.Name)
	awaitState(h.t, c, StateSleeping)
	awaitGone(h.t, h.pid(spec.Name, "pid"), "the server after filling its cache")
	checkCatalog(h.t, spec.Name, c.Catalog(), normalCatalog())
	if err := host.Close(ctxFor(h.t)); err != nil {
		h.t.Fatal(err)
	}
}

// Miss, then hit: the first Host starts the server once to fill the cache;
// the second lists it from the cache without starting it, with the same
// bytes, and its first call starts it.
func TestLazyCacheMissThenHit(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 0)
	h.fillCache(spec)
	if n := h.starts("lz"); n != 1 {
		t.Fatalf("filling the cache started the server %d times, want 1", n)
	}
	entries, _ := os.ReadDir(h.cacheDir())
	if len(entries) != 1 {
		t.Fatalf("cache holds %d files, want 1", len(entries))
	}
	if fi, _ := entries[0].Info(); fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", fi.Mode().Perm())
	}

	host := h.host(nil)
	began := time.Now()
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	if st, _ := c.State(); st != StateSleeping {
		t.Fatalf("state %s after StartAll, want sleeping", st)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("StartAll of a cached lazy server took %v", d)
	}
	checkCatalog(t, "lz", c.Catalog(), normalCatalog())
	init := c.Init()
	if init.ServerInfo == nil || string(init.ServerInfo) != testServerInfo || init.Instructions != testInstructions ||
		init.ProtocolVersion != "2025-06-18" || !init.Capabilities.Tools || !init.Capabilities.Logging {
		t.Errorf("cached InitResult %+v", init)
	}
	if n := h.starts("lz"); n != 1 {
		t.Fatalf("a cache hit started the server (%d starts)", n)
	}
	st := c.Status()
	if st.State != StateSleeping || st.CachedAt.IsZero() || !st.Lazy || st.Tools != 4 {
		t.Errorf("status %+v", st)
	}

	res, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`))
	if err != nil || string(res) != testEchoResult {
		t.Fatalf("first call: %s, %v", res, err)
	}
	if st, _ := c.State(); st != StateReady || h.starts("lz") != 2 {
		t.Errorf("after the call: state %s, %d starts; want ready, 2", st, h.starts("lz"))
	}
	// The live catalog is the cached one: the lists come back the same.
	awaitClosed(t, c.Settled(), "settled")
	pollUntil(t, "phase B after the wake", func() bool { return len(c.Catalog().Templates) == 3 })
	checkCatalog(t, "lz", c.Catalog(), normalCatalog())
}

// A changed spec is a miss (another key): the server is started again, and
// the old entry replaced.
func TestLazyCacheStale(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 0)
	h.fillCache(spec)
	spec.Env["EXTRA"] = "secret-value"
	h.fillCache(spec)
	if n := h.starts("lz"); n != 2 {
		t.Fatalf("%d starts, want 2: a changed spec must miss", n)
	}
	entries, _ := os.ReadDir(h.cacheDir())
	if len(entries) != 1 {
		t.Errorf("cache holds %d files, want 1 (the stale one removed)", len(entries))
	}
	data, _ := os.ReadFile(filepath.Join(h.cacheDir(), entries[0].Name()))
	if strings.Contains(string(data), "secret-value") || strings.Contains(entries[0].Name(), "secret-value") {
		t.Error("the cache holds an env value")
	}
}

// A corrupt entry is ignored with a warning, and rewritten.
func TestLazyCacheCorrupt(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 0)
	h.fillCache(spec)
	entries, _ := os.ReadDir(h.cacheDir())
	p := filepath.Join(h.cacheDir(), entries[0].Name())
	if err := os.WriteFile(p, []byte(`{"format":1,"tools":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	h.fillCache(spec)
	if n := h.starts("lz"); n != 2 {
		t.Fatalf("%d starts, want 2", n)
	}
	if !strings.Contains(h.log.String(), "ignoring its catalog cache") || !strings.Contains(h.log.String(), "unusable") {
		t.Errorf("no warning about the corrupt entry in:\n%s", h.log.String())
	}
	if _, err := catalogcache.Open(h.cacheDir()).Load("lz", specKey(spec, false)); err != nil {
		t.Errorf("the entry was not rewritten: %v", err)
	}
}

// A cache that cannot be written leaves a lazy server running, as an
// eager one, with a warning.
func TestLazyCacheUnwritable(t *testing.T) {
	h := newHarness(t)
	blocker := filepath.Join(h.dir, "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	host := h.host(&Options{CacheDir: filepath.Join(blocker, "cache")})
	if err := host.StartAll(ctxFor(t), []config.Spec{h.lazySpec("lz", 0)}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	awaitClosed(t, c.Settled(), "settled")
	pollUntil(t, "the warning", func() bool { return strings.Contains(h.log.String(), "writing the catalog cache failed") })
	if st, _ := c.State(); st != StateReady {
		t.Errorf("state %s, want ready (eager)", st)
	}
	if _, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`)); err != nil {
		t.Fatal(err)
	}
}

// 50 first calls at once start a sleeping server exactly once, and all
// are answered.
func TestLazyConcurrentFirstCalls(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 0)
	h.fillCache(spec)
	host := h.host(nil)
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			res, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`))
			if err == nil && string(res) != testEchoResult {
				err = errors.New("wrong result " + string(res))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := h.starts("lz"); n != 2 { // the fill, and one wake
		t.Errorf("%d starts, want 2", n)
	}
	if st := c.Status(); st.Calls != 50 || st.LazyStarts != 1 || st.IdleStops != 0 {
		t.Errorf("counted %d calls, %d lazy starts, %d idle stops; want 50, 1, 0", st.Calls, st.LazyStarts, st.IdleStops)
	}
}

// Idle stop: a server nothing uses goes back to sleep with its names
// listed; never while a call is in flight; and the next call wakes it.
func TestLazyIdleStop(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 200*time.Millisecond)
	spec.Timeouts.Call = config.Duration(time.Second)
	h.fillCache(spec)
	host := h.host(nil)
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	before := sleepsAfterWake(h.rec.changesOf("lz")) // the fill's
	// "slow" is never answered: in flight for the whole call timeout, five
	// idle timeouts, during which the server must stay up.
	began := time.Now()
	_, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"slow"}`))
	if err == nil || time.Since(began) < time.Second {
		t.Fatalf("slow call: %v after %v, want a timeout after 1s", err, time.Since(began))
	}
	if got := sleepsAfterWake(h.rec.changesOf("lz")) - before; got != 0 {
		t.Fatalf("the server slept %d times during a call in flight", got)
	}
	pid := h.pid("lz", "pid")
	awaitState(t, c, StateSleeping)
	awaitGone(t, pid, "the idle server")
	checkCatalog(t, "lz", c.Catalog(), normalCatalog())
	if st := c.Status(); st.LastUse.IsZero() || st.SinceLastUseSeconds < 0 {
		t.Errorf("status %+v: want the last use", st)
	}
	if _, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`)); err != nil {
		t.Fatal(err)
	}
	if n := h.starts("lz"); n != 3 {
		t.Errorf("%d starts, want 3 (fill, first call, after the idle stop)", n)
	}
}

// The counters of a lazy server move by exactly the wakes and idle stops
// it goes through, and not for the start and stop that fill its cache.
func TestLazyCounters(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 100*time.Millisecond)
	host := h.host(nil) // no cache yet: the server starts to fill it
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	awaitState(t, c, StateSleeping)
	counts := func(starts, stops int64) {
		t.Helper()
		if st := c.Status(); st.LazyStarts != starts || st.IdleStops != stops {
			t.Fatalf("%d lazy starts, %d idle stops; want %d, %d", st.LazyStarts, st.IdleStops, starts, stops)
		}
	}
	counts(0, 0)
	for round := int64(1); round <= 3; round++ {
		if _, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`)); err != nil {
			t.Fatal(err)
		}
		counts(round, round-1)
		awaitState(t, c, StateSleeping)
		counts(round, round)
	}
	if n := h.starts("lz"); n != 4 {
		t.Errorf("%d processes started, want 4 (the fill and three wakes)", n)
	}
}

// sleepsAfterWake counts moves to sleeping after the first ready.
func sleepsAfterWake(evs []changeEvent) int {
	n, ready := 0, false
	for _, ev := range evs {
		switch {
		case ev.state == StateReady:
			ready = true
		case ev.state == StateSleeping && ready:
			n++
		}
	}
	return n
}

// A call that arrives while the idle stop is under way (a server that
// ignores EOF and SIGTERM takes the grace periods to go) waits for it and
// is served by a new process.
func TestLazyCallDuringIdleStop(t *testing.T) {
	needProcfs(t)
	h := newHarness(t)
	spec := h.spec("lz", modeStubborn)
	spec.IdleTimeout = config.Duration(100 * time.Millisecond)
	host := h.host(nil)
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	pid := h.pid("lz", "pid")
	awaitState(t, c, StateSleeping) // the stop has begun; the process lives on
	if !alive(pid) {
		t.Fatal("the stubborn server was gone at once: the test proves nothing")
	}
	res, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`))
	if err != nil || string(res) != testEchoResult {
		t.Fatalf("call during the stop: %s, %v", res, err)
	}
	if alive(pid) {
		t.Error("the old process outlived the stop")
	}
	if n := h.starts("lz"); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// A lazy server that crashes after a wake is restarted by its supervisor
// like any server; one that fails to wake reports the failure, keeps its
// names, and is tried again by the next request after the backoff.
func TestLazyCrashAndFailedWake(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 0)
	h.fillCache(spec)
	policy := RestartPolicy{MaxAttempts: 3, Backoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Stable: time.Minute}
	host := h.host(&Options{Restart: policy})
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	if _, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"crash"}`)); err == nil {
		t.Fatal("the crash call succeeded")
	}
	pollUntil(t, "the restart after the crash", func() bool { return h.starts("lz") == 3 })
	awaitState(t, c, StateReady)
	if _, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`)); err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); st.LazyStarts != 1 || st.Restarts != 1 {
		t.Errorf("after a wake and a crash: %d lazy starts, %d restarts; want 1, 1 (the restart is the supervisor's)", st.LazyStarts, st.Restarts)
	}
	if err := host.Close(ctxFor(t)); err != nil {
		t.Fatal(err)
	}

	// Now it cannot start, its spec unchanged: the cache still hits.
	if err := os.WriteFile(filepath.Join(h.dir, "lz.refuse"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	host = h.host(&Options{Restart: policy})
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ = host.Client("lz")
	_, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeUnavailable || !strings.Contains(err.Error(), `server "lz"`) || !strings.Contains(err.Error(), "exit status 9") {
		t.Fatalf("call to a server that cannot start: %v", err)
	}
	st := c.Status()
	if st.State != StateRestarting || !strings.Contains(st.Error, "exit status 9") || !c.Listed() || st.Tools != 4 || st.LazyStarts != 0 {
		t.Errorf("after a failed wake: %+v, listed %v", st, c.Listed())
	}
	// The next request within the backoff gets the error at once...
	if _, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`)); err == nil || !strings.Contains(err.Error(), "restarting after") {
		t.Errorf("a call within the backoff: %v", err)
	}
	// ... and one after it tries again, and succeeds once the server can.
	if err := os.Remove(filepath.Join(h.dir, "lz.refuse")); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "a call after the backoff", func() bool {
		_, err := c.Call(ctxFor(t), "tools/call", []byte(`{"name":"echo"}`))
		return err == nil
	})
	if st := c.Status(); st.State != StateReady || st.LazyStarts != 1 {
		t.Errorf("state %s after %d lazy starts, want ready after 1 (failed wakes are not counted)", st.State, st.LazyStarts)
	}
}

// Closing a Fleet while its lazy server is being woken leaves no process
// and no goroutine (the harness checks both).
func TestLazyCloseWhileWaking(t *testing.T) {
	h := newHarness(t)
	spec := h.lazySpec("lz", 0)
	h.fillCache(spec)
	spec.Timeouts.Connect = config.Duration(subprocWait)
	host := h.host(nil)
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client("lz")
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "tools/call", []byte(`{"name":"echo"}`))
		done <- err
	}()
	pollUntil(t, "the wake to begin", func() bool { return h.starts("lz") == 2 })
	if err := host.Close(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(subprocWait):
		t.Fatal("the call did not end with the Host")
	}
}
