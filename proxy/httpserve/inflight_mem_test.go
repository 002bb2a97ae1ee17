package httpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// What one stateless request costs the trunk while it is in flight: a
// handler in front of an in-memory server (at revision, 2025-11-25 or
// 2026-07-28) whose tool holds every call until released, and n requests
// sent straight to the handler, each on a goroutine of its own as
// net/http would run it.
type heldTrunk struct {
	h       *Handler
	arrived chan struct{}                 // one per call the server is holding
	release atomic.Pointer[chan struct{}] // closed: the calls held answer
}

func newHeldTrunk(tb testing.TB, revision string) *heldTrunk {
	tb.Helper()
	tb.Setenv("XDG_CACHE_HOME", tb.TempDir()) // the catalog cache
	ht := &heldTrunk{arrived: make(chan struct{}, 1<<16)}
	release := make(chan struct{})
	ht.release.Store(&release)
	srv := &memserver.Server{Revision: revision, Tools: []json.RawMessage{memserver.Tool("hold", "answers when released")},
		Handle: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			release := *ht.release.Load()
			ht.arrived <- struct{}{}
			select {
			case <-release:
				return memserver.Text("released"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	ht.h = memTrunkHandler(tb, revision, srv)
	return ht
}

// memTrunkHandler is a shared trunk's HTTP handler in front of srv, the
// in-memory server "m" at revision, closed when tb ends.
func memTrunkHandler(tb testing.TB, revision string, srv *memserver.Server) *Handler {
	tb.Helper()
	set := memserver.Set{"m": srv}
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{"m":{"command":"in-memory","protocolVersion":"`+revision+`"}}}`),
		func(string) (string, bool) { return "", false })
	if err != nil {
		tb.Fatal(err)
	}
	tr := proxy.New(cfg, &proxy.Options{Dial: func(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) { return set.Dial(spec, h) }})
	tr.Share()
	tr.Start([]byte(`{}`), protocol.Revision2025)
	h := New(tr, Options{})
	tb.Cleanup(func() {
		h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = tr.Close(ctx)
	})
	return h
}

// statelessCall is a 2026-07-28 tools/call of the held tool.
func statelessCall(id int) *http.Request {
	body := `{"jsonrpc":"2.0","id":` + itoa(int64(id)) + `,"method":"tools/call","params":{"name":"mcp__m__hold","arguments":{},` +
		`"_meta":{"` + protocol.MetaProtocolVersion + `":"` + protocol.Stateless + `","` + protocol.MetaClientCapabilities + `":{}}}}`
	r := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(protocol.HeaderProtocolVersion, protocol.Stateless)
	r.Header.Set(protocol.HeaderMethod, "tools/call")
	r.Header.Set(protocol.HeaderName, "mcp__m__hold")
	return r
}

// inFlightCost holds n stateless calls in flight at once and returns what
// each adds, read after a collection with all of them held by the server,
// then releases them and checks every answer. The goroutines counted
// include the request's own (net/http's) and the in-memory server's
// handler of its call, which a real server runs in its own process.
func (ht *heldTrunk) inFlightCost(tb testing.TB, n int) inFlight {
	tb.Helper()
	reqs := make([]*http.Request, n)
	recs := make([]*httptest.ResponseRecorder, n)
	for i := range n {
		reqs[i], recs[i] = statelessCall(i+1), httptest.NewRecorder()
	}
	before := measure()
	done := make(chan int, n)
	for i := range n {
		go func() {
			ht.h.ServeHTTP(recs[i], reqs[i])
			done <- i
		}()
	}
	deadline := time.After(30 * time.Second)
	for range n {
		select {
		case <-ht.arrived:
		case i := <-done:
			tb.Fatalf("request %d answered before release: %d %s", i, recs[i].Code, recs[i].Body)
		case <-deadline:
			tb.Fatal("the calls did not all reach the server")
		}
	}
	after := measure()
	next := make(chan struct{})
	close(*ht.release.Swap(&next))
	for range n {
		select {
		case i := <-done:
			if !strings.Contains(recs[i].Body.String(), `"released"`) {
				tb.Errorf("request %d: %d %s", i, recs[i].Code, recs[i].Body)
			}
		case <-deadline:
			tb.Fatal("the calls were not all answered after release")
		}
	}
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	return inFlight{heap: per(after.heap, before.heap), stack: per(after.stack, before.stack),
		goroutines: float64(after.goroutines-before.goroutines) / float64(n)}
}

// inFlight is what one request in flight holds: live heap and goroutine
// stacks in bytes, and goroutines.
type inFlight struct{ heap, stack, goroutines float64 }

type reading struct {
	heap, stack uint64
	goroutines  int
}

// measure reads the live heap after a full collection, the stacks in use
// and the goroutines.
func measure() reading {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return reading{heap: ms.HeapAlloc, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

// Each stateless request in flight holds at most 16 KiB of heap and, of
// goroutines, its own, which runs the request (jsonrpc.Conn.Answer), and
// the in-memory server's handler of its call; and with a 2025-11-25
// server the call to it, which may outlive the request (proxy/translate's
// Parking). Its session has no goroutine of its own.
func TestStatelessRequestInFlightCost(t *testing.T) {
	for _, tc := range []struct {
		revision   string
		goroutines float64
	}{{protocol.Revision2025, 3}, {protocol.Stateless, 2}} {
		t.Run(tc.revision, func(t *testing.T) {
			ht := newHeldTrunk(t, tc.revision)
			ht.inFlightCost(t, 8) // warm-up: pools, the catalog, idle handlers
			got := ht.inFlightCost(t, 100)
			if got.heap > 16<<10 || got.goroutines > tc.goroutines {
				t.Errorf("per request in flight: %.0f bytes of heap, %.2f goroutines (and %.0f bytes of stacks); want at most 16 KiB and %.0f",
					got.heap, got.goroutines, got.stack, tc.goroutines)
			}
		})
	}
}

// BenchmarkStatelessInFlight reports what each stateless request held in
// flight costs, with a server at each revision: live heap (B/inflight),
// goroutine stacks (stackB/inflight) and goroutines (goroutines/inflight,
// the request's own and the in-memory server's handler included).
func BenchmarkStatelessInFlight(b *testing.B) {
	for _, revision := range []string{protocol.Revision2025, protocol.Stateless} {
		b.Run("server="+revision, func(b *testing.B) {
			ht := newHeldTrunk(b, revision)
			ht.inFlightCost(b, 8) // warm-up: pools, the catalog, idle handlers
			var got inFlight
			for b.Loop() {
				got = ht.inFlightCost(b, 200)
			}
			b.ReportMetric(got.heap, "B/inflight")
			b.ReportMetric(got.stack, "stackB/inflight")
			b.ReportMetric(got.goroutines, "goroutines/inflight")
		})
	}
}
