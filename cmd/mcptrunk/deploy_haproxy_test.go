//go:build !windows

package main

// deploy/haproxy.cfg, run: HAProxy in front of two `mcptrunk serve --http`
// replicas of one config (docs/deploy.md). Both revisions pass through it:
// a go-sdk session at 2025-11-25 stays on the replica that answered its
// initialize, and stateless 2026-07-28 requests go to both in turn. Then
// the replica holding the session is killed while stateless clients keep
// sending: none of their requests is lost (HAProxy sends them, or sends
// them again, to the other replica), and the session's client gets 404 and
// works again once it initializes anew.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestDeployHAProxy(t *testing.T) {
	t.Parallel()
	bin := needHAProxy(t)
	ctx := testCtx(t, 2*time.Minute)
	tag := newTag(t)
	t.Cleanup(func() { assertNoProcesses(t, tag, 10*time.Second) })
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	replicas := []*httpTrunk{
		startDeployReplica(t, ctx, "replica1", cfg),
		startDeployReplica(t, ctx, "replica2", cfg),
	}
	lb := startDeployHAProxy(t, ctx, bin, tag, replicas[0], replicas[1], "mcp__notes__echo")

	// 2025-11-25: a session, its every request on one replica. Were they
	// spread, every other one would find no session there.
	host2025 := httpHost(t, ctx, lb.url, hostConfig{sdkDefaults: true}, "2025-11-25").ClientSession
	sid := host2025.ID()
	if sid == "" {
		t.Fatal("the 2025-11-25 session through haproxy has no Mcp-Session-Id")
	}
	for i := range 10 {
		if err := echoOver(ctx, host2025, fmt.Sprintf("host2025 %d", i)); err != nil {
			t.Fatalf("2025-11-25 call %d through haproxy: %v", i, err)
		}
	}
	owner := sessionOwner(t, ctx, replicas, sid)
	survivor := replicas[1-owner]

	// 2026-07-28: no session; the go-sdk client and raw POSTs.
	stateless := httpHost(t, ctx, lb.url, hostConfig{sdkDefaults: true}, "").ClientSession
	if id := stateless.ID(); id != "" {
		t.Fatalf("the 2026-07-28 client got session %q; that revision has none", id)
	}
	before := answeredBy(t, ctx, lb)
	s := startStatelessStream(t, ctx, stateless, lb.url)
	waitStream(t, ctx, s, 30)
	after := answeredBy(t, ctx, lb)
	for _, name := range []string{"replica1", "replica2"} {
		if after[name] <= before[name] {
			t.Errorf("%s answered no stateless request (2xx %d before the stream, %d after): they should go round robin", name, before[name], after[name])
		}
	}

	// The session's replica dies mid-stream.
	replicas[owner].kill(t)
	killedAt := s.ok.Load()
	waitStream(t, ctx, s, killedAt+60)
	if err := eventually(ctx, 20*time.Millisecond, func() error { return lb.wantServer(ctx, replicas[owner].name, "DOWN") }); err != nil {
		t.Errorf("haproxy never took the dead replica out: %v", err)
	}
	waitStream(t, ctx, s, s.ok.Load()+20)
	lost := s.stop()
	if len(lost) > 0 {
		t.Errorf("%d stateless requests failed around the kill (%d succeeded), the first: %s\nhaproxy:\n%s", len(lost), s.ok.Load(), lost[0], tail(lb.stderr.String(), 3000))
	}
	stats, err := lb.serverStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	be := stats["BACKEND"]
	if atoi(be["wretr"])+atoi(be["wredis"]) == 0 {
		t.Errorf("haproxy counted no retry or redispatch, yet a replica died under a stream of requests (connection errors %s, response errors %s)", be["econ"], be["eresp"])
	}
	t.Logf("stateless requests: %d before the kill, %d in all, %d failed; haproxy retried %s and redispatched %s", killedAt, s.ok.Load(), len(lost), be["wretr"], be["wredis"])

	// The session is gone with its replica: 404 through haproxy, and the
	// go-sdk session fails; a new initialize works, on the survivor.
	r, err := postMCP(ctx, lb.url, `{"jsonrpc":"2.0","id":"after","method":"ping"}`,
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	if err != nil || r.status != http.StatusNotFound {
		t.Errorf("a request of the dead replica's session through haproxy: status %d, %q, %v; want 404", r.status, r.messages, err)
	}
	if err := echoOver(ctx, host2025, "after the kill"); err == nil {
		t.Error("the 2025-11-25 session still works after its replica was killed")
	} else if !errors.Is(err, mcp.ErrSessionMissing) && !strings.Contains(err.Error(), mcp.ErrSessionMissing.Error()) {
		// The SDK keeps ErrSessionMissing in the chain when the call's own
		// POST gets the 404, and only its text when its GET stream got it
		// first and closed the session.
		t.Errorf("the 2025-11-25 session after the kill: %v; want the SDK's ErrSessionMissing, its reading of a 404", err)
	}
	again := httpHost(t, ctx, lb.url, hostConfig{sdkDefaults: true}, "2025-11-25").ClientSession
	for i := range 5 {
		if err := echoOver(ctx, again, fmt.Sprintf("again %d", i)); err != nil {
			t.Fatalf("2025-11-25 call %d after initializing again: %v", i, err)
		}
	}
	sessionOwner(t, ctx, []*httpTrunk{survivor}, again.ID())
}

// sessionOwner finds which replica holds session sid, asking each one
// directly: the one that holds it answers a ping, every other one 404.
func sessionOwner(t testing.TB, ctx context.Context, replicas []*httpTrunk, sid string) int {
	t.Helper()
	owner := -1
	for i, r := range replicas {
		reply, err := postMCP(ctx, r.url, `{"jsonrpc":"2.0","id":"probe","method":"ping"}`,
			map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
		switch {
		case err != nil:
			t.Fatalf("ping of session %s on %s: %v", sid, r.name, err)
		case reply.status == http.StatusOK && owner < 0:
			owner = i
		case reply.status != http.StatusNotFound:
			t.Fatalf("ping of session %s on %s: %d %q, want 200 on one replica and 404 on the others", sid, r.name, reply.status, reply.messages)
		}
	}
	if owner < 0 {
		t.Fatalf("no replica holds session %s", sid)
	}
	return owner
}

// answeredBy is how many 2xx answers each replica gave through haproxy.
func answeredBy(t testing.TB, ctx context.Context, lb *deployLB) map[string]int {
	t.Helper()
	stats, err := lb.serverStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for name, s := range stats {
		out[name] = atoi(s["hrsp_2xx"])
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// statelessStream is requests sent back to back through haproxy until
// stop: echo calls of the go-sdk client on two goroutines, and raw POSTs
// of the same on a third. Each request that fails is kept. The answers
// are small: a replica killed while it writes an answer leaves half of it
// sent, which no proxy can send again.
type statelessStream struct {
	ok      atomic.Int64
	quit    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	failed  []string
	stopped bool
}

func startStatelessStream(t testing.TB, ctx context.Context, cs *mcp.ClientSession, url string) *statelessStream {
	s := &statelessStream{quit: make(chan struct{})}
	t.Cleanup(func() { s.stop() })
	loop := func(send func(i int) error) {
		s.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-s.quit:
					return
				default:
				}
				if err := send(i); err != nil {
					s.mu.Lock()
					s.failed = append(s.failed, err.Error())
					s.mu.Unlock()
					continue
				}
				s.ok.Add(1)
			}
		})
	}
	for w := range 2 {
		loop(func(i int) error { return echoOver(ctx, cs, fmt.Sprintf("stateless %d.%d", w, i)) })
	}
	// Raw calls too: the headers HAProxy reads are the client's own.
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "mcp__notes__echo"}
	loop(func(i int) error {
		text := fmt.Sprintf("raw %d", i)
		call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + withMeta(`{"name":"mcp__notes__echo","arguments":{"text":`+mustJSON(text)+`}}`) + `}`
		r, err := postMCP(ctx, url, call, headers)
		if body := strings.Join(r.messages, "\n"); err == nil && (r.status != http.StatusOK || !strings.Contains(body, mustJSON(text))) {
			err = fmt.Errorf("raw tools/call: %d %s", r.status, tail(body, 300))
		}
		return err
	})
	return s
}

// waitStream waits until n requests of the stream have succeeded.
func waitStream(t testing.TB, ctx context.Context, s *statelessStream, n int64) {
	t.Helper()
	if !waitFor(ctx, 60*time.Second, func() bool { return s.ok.Load() >= n }) {
		s.mu.Lock()
		failed := len(s.failed)
		s.mu.Unlock()
		t.Fatalf("the stateless stream reached %d successful requests (%d failed), want %d", s.ok.Load(), failed, n)
	}
}

// stop ends the stream after the requests in flight and returns those
// that failed.
func (s *statelessStream) stop() []string {
	if !s.stopped {
		s.stopped = true
		close(s.quit)
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}
