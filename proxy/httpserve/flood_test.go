package httpserve

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// floods is a respondFunc that answers "flood", then sends count log
// messages of size bytes each (while no request is open), counting them
// in sent, and says so on flooded.
func floods(count, size int, sent *atomic.Int64, flooded chan<- struct{}) respondFunc {
	data := strings.Repeat("x", size)
	return func(w io.Writer, env jsonrpc.Envelope) bool {
		if env.Method != "flood" {
			return true
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(env.ID)+`,"result":{}}`+"\n")
		for range count {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+data+`"}}`+"\n")
			sent.Add(1)
		}
		flooded <- struct{}{}
		return false
	}
}

// Sessions whose hosts never open a GET stream, flooded with log messages
// of 256 KiB: the trunk keeps no more than its budget, counts every
// message it dropped, warns once per session (not per message), answers
// every call, and holds nothing once the sessions are deleted: the heap
// goes back to where it was.
func TestFloodStaysWithinBudget(t *testing.T) {
	const (
		sessions = 16
		count    = 24
		size     = 256 << 10
		budget   = 16 << 20
	)
	var sent, dropped atomic.Int64
	flooded := make(chan struct{}, 1)
	logs := &testkit.Buffer{}
	th := newTestHandler(t, Options{MaxBufferedBytes: budget, Dropped: func(n int) { dropped.Add(int64(n)) },
		Logger: slog.New(slog.NewTextHandler(logs, nil))}, floods(count, size, &sent, flooded))
	runtime.GC()
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	start := time.Now()
	ids := make([]string, sessions)
	var peak int64
	for i := range ids {
		ids[i] = th.initialize()
		if status, body := th.call(ids[i], "application/json", `{"jsonrpc":"2.0","id":1,"method":"flood"}`); status != http.StatusOK || !strings.Contains(body, `"result"`) {
			t.Fatalf("flood in session %d: HTTP %d %.200s", i, status, body)
		}
		<-flooded
		if status, body := th.call(ids[i], "application/json", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != http.StatusOK || !strings.Contains(body, `"result"`) {
			t.Fatalf("ping after the flood in session %d: HTTP %d %.200s", i, status, body)
		}
		peak = max(peak, th.pool.used.Load())
	}
	var kept int
	for _, id := range ids {
		n, _ := th.session(id).router.get.size()
		kept += n
	}
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	if peak > budget {
		t.Errorf("the sessions kept %d bytes, past the budget of %d", peak, budget)
	}
	lost := dropped.Load()
	if sent.Load() != lost+int64(kept) {
		t.Errorf("%d messages sent, %d dropped + %d kept", sent.Load(), dropped.Load(), kept)
	}
	warnings := map[string]int{}
	for line := range strings.Lines(logs.String()) {
		if _, rest, ok := strings.Cut(line, "dropped notifications"); ok {
			_, id, _ := strings.Cut(rest, "session=")
			warnings[strings.Fields(id)[0]]++
		}
	}
	most := 1 + int(time.Since(start)/warnEvery)
	for id, n := range warnings {
		if n > most {
			t.Errorf("session %s: %d warnings about dropped notifications in %s, want at most one every %s", id, n, time.Since(start), warnEvery)
		}
	}
	if len(warnings) == 0 {
		t.Error("no warning about dropped notifications")
	}

	for _, id := range ids {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, th.url, nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := th.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if used := th.pool.used.Load(); used != 0 {
		t.Errorf("%d bytes still counted after every session was deleted", used)
	}
	runtime.GC()
	debug.FreeOSMemory()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	mb := func(n uint64) float64 { return float64(n) / (1 << 20) }
	t.Logf("%d sessions x %d messages of %d KiB (%.0f MiB sent, %d dropped, %d kept); budget %d MiB, peak kept %.1f MiB; heap in use: %.1f MiB before, %.1f MiB with the sessions open, %.1f MiB after DELETE and FreeOSMemory; heap released to the OS %.1f MiB",
		sessions, count, size>>10, float64(sent.Load())*size/(1<<20), lost, kept, budget>>20, float64(peak)/(1<<20),
		mb(before.HeapInuse), mb(during.HeapInuse), mb(after.HeapInuse), mb(after.HeapReleased))
	if after.HeapInuse > before.HeapInuse+8<<20 {
		t.Errorf("heap in use %.1f MiB after the sessions ended, %.1f MiB before", mb(after.HeapInuse), mb(before.HeapInuse))
	}
}
