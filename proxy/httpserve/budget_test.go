package httpserve

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// note is a notifications/message of about size bytes, numbered n.
func note(n, size int) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d %s"}}`, n, strings.Repeat("x", size)))
}

// budgetRouter is a router with these budgets, counting what it drops and
// why it would close.
func budgetRouter(p *pool, streamBytes, sessionBytes int64) (r *router, dropped *atomic.Int64, closed *atomic.Value) {
	dropped, closed = new(atomic.Int64), new(atomic.Value)
	r = newRouter(routerConfig{session: "test", streamBytes: streamBytes, sessionBytes: sessionBytes, pool: p,
		onDrop: func(n int) { dropped.Add(int64(n)) }, overflow: func(reason string) { closed.Store(reason) }})
	return r, dropped, closed
}

// What waits for a GET stream that never comes is bounded in bytes: the
// oldest notifications go first, each one counted, and the newest stay.
func TestSessionBudgetDropsOldestNotifications(t *testing.T) {
	r, dropped, closed := budgetRouter(nil, 1<<40, 64<<10)
	for i := range 200 {
		_ = r.WriteMessage(note(i, 1<<10))
	}
	if held := r.heldBytes(); held > 64<<10 {
		t.Errorf("the session holds %d bytes, past its budget of %d", held, 64<<10)
	}
	kept := events(r.get)
	if int64(len(kept))+dropped.Load() != 200 || dropped.Load() == 0 {
		t.Errorf("%d kept + %d dropped, want 200 in all, some dropped", len(kept), dropped.Load())
	}
	if !strings.Contains(kept[len(kept)-1], `"199 `) || strings.Contains(kept[0], `"0 `) {
		t.Errorf("kept %.40s ... %.40s: want the newest", kept[0], kept[len(kept)-1])
	}
	if closed.Load() != nil {
		t.Errorf("closed for %v: notifications alone never close a session", closed.Load())
	}
}

// Events dropped from a stream past keptEvents, or past its bytes, before
// any exchange wrote them are counted; those written were only kept for
// resumption and are not.
func TestStreamDropsAreCounted(t *testing.T) {
	r, dropped, _ := budgetRouter(nil, 1<<40, 1<<40)
	get := r.openGet()
	for i := range keptEvents + 100 {
		_ = r.WriteMessage(note(i, 10))
	}
	if dropped.Load() != 100 {
		t.Errorf("%d dropped past %d events, want 100", dropped.Load(), keptEvents)
	}
	get.mu.Lock()
	get.sent = get.last // as if written
	get.mu.Unlock()
	for i := range 50 {
		_ = r.WriteMessage(note(i, 10))
	}
	if dropped.Load() != 100 {
		t.Errorf("%d dropped, want still 100: only written events made room", dropped.Load())
	}

	r, dropped, _ = budgetRouter(nil, 8<<10, 1<<40)
	r.openGet()
	for i := range 100 {
		_ = r.WriteMessage(note(i, 1<<10))
	}
	if n, b := r.get.size(); b > 8<<10 || int64(n)+dropped.Load() != 100 {
		t.Errorf("a stream of %d bytes budget keeps %d events, %d bytes; %d dropped", 8<<10, n, b, dropped.Load())
	}
}

// An answer is never dropped: notifications make room for it, and a
// session whose unread answers alone are past its budget is closed, with
// a reason that says so.
func TestAnswersAreNeverDropped(t *testing.T) {
	r, dropped, closed := budgetRouter(nil, 1<<40, 16<<10)
	st := newStream("s1")
	r.expect([]byte(`1`), nil, st)
	for i := range 10 {
		_ = r.WriteMessage(note(i, 1<<10))
	}
	answer := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("a", 12<<10) + `"}}`
	_ = r.WriteMessage([]byte(answer))
	if got := events(st); got[len(got)-1] != answer || !st.final {
		t.Fatalf("the answer is not the stream's last event")
	}
	if dropped.Load() == 0 || closed.Load() != nil {
		t.Errorf("dropped %d, closed %v: want notifications dropped for the answer, the session open", dropped.Load(), closed.Load())
	}
	st2 := newStream("s2")
	r.expect([]byte(`2`), nil, st2)
	_ = r.WriteMessage([]byte(strings.Replace(answer, `"id":1`, `"id":2`, 1)))
	if got := events(st2); len(got) != 1 || !st2.final {
		t.Errorf("the second answer was dropped")
	}
	if reason, _ := closed.Load().(string); !strings.Contains(reason, "has not read") || !strings.Contains(reason, "maxSessionBufferedBytes") {
		t.Errorf("answers past the budget: closed for %q, want a reason naming the budget", reason)
	}
}

// The budget of all sessions together: a session that floods takes from
// its own oldest notifications, then from the session holding the most;
// when answers alone are past it, the session holding the most is
// closed.
func TestPoolReclaimsFromTheLargest(t *testing.T) {
	p := newPool(100 << 10)
	big, bigDropped, bigClosed := budgetRouter(p, 1<<40, 1<<40)
	small, smallDropped, _ := budgetRouter(p, 1<<40, 1<<40)
	for i := range 90 {
		_ = big.WriteMessage(note(i, 1<<10))
	}
	for i := range 20 {
		_ = small.WriteMessage(note(i, 1<<10))
	}
	if used := p.used.Load(); used > 100<<10 || used != big.heldBytes()+small.heldBytes() {
		t.Errorf("pool uses %d, sessions hold %d + %d, limit %d", used, big.heldBytes(), small.heldBytes(), 100<<10)
	}
	if bigDropped.Load() == 0 || smallDropped.Load() != 0 {
		t.Errorf("dropped: %d from the larger session, %d from the smaller; want only the larger's", bigDropped.Load(), smallDropped.Load())
	}
	for i := range 3 {
		st := newStream(fmt.Sprint("a", i))
		big.expect([]byte(fmt.Sprint(i)), nil, st)
		_ = big.WriteMessage([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"t":"%s"}}`, i, strings.Repeat("a", 40<<10))))
	}
	if reason, _ := bigClosed.Load().(string); !strings.Contains(reason, "holds the most") {
		t.Errorf("answers past the pool: the largest session closed for %q", reason)
	}
	big.endAll("closed")
	small.endAll("closed")
	if used := p.used.Load(); used != 0 || len(p.members) != 0 {
		t.Errorf("after every session ended the pool uses %d bytes for %d sessions", used, len(p.members))
	}
}

// Past knownLimit streams, the oldest answered ones are forgotten and
// what they kept is let go; one still waiting for its answer stays.
func TestForgottenStreamsReleaseTheirBytes(t *testing.T) {
	r, _, _ := budgetRouter(nil, 1<<40, 1<<40)
	waiting := newStream("w")
	r.expect([]byte(`"w"`), nil, waiting)
	for i := range 3 * knownLimit {
		st := newStream(fmt.Sprint("s", i))
		r.expect([]byte(fmt.Sprint(i)), nil, st)
		_ = r.WriteMessage([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i)))
	}
	var held int64
	for _, st := range r.known {
		_, b := st.size()
		held += b
	}
	if len(r.known) > knownLimit || len(r.recent) > 2*knownLimit || r.heldBytes() != held {
		t.Errorf("%d streams known, %d recent, %d bytes counted for %d kept", len(r.known), len(r.recent), r.heldBytes(), held)
	}
	if r.find("w") != waiting {
		t.Error("the stream still waiting for its answer was forgotten")
	}
}
