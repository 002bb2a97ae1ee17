package instances

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// testPool is a Pool whose keys' fleets are made by made.
type testPool struct {
	*Pool[string]
	made func(key string) *upstream.Fleet
}

// Client is Pool.Client with the fleet made by made.
func (p testPool) Client(ctx context.Context, key, id string, spec func() (config.Spec, error), started func(*upstream.Client)) (*upstream.Client, error) {
	return p.Pool.Client(ctx, key, func() *upstream.Fleet { return p.made(key) }, id, spec, started)
}

// pool is a Pool of in-memory instances of one server "s", which counts
// its dials per key and reports each key's closing on closed.
func pool(t *testing.T, idle *time.Duration) (testPool, chan string, func(key string) int) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var mu sync.Mutex
	dials := map[string]int{}
	closed := make(chan string, 8)
	p := &Pool[string]{Whose: "the caller's", Idle: func() time.Duration { return *idle }, Closed: func(key string) { closed <- key }}
	made := func(key string) *upstream.Fleet {
		return upstream.NewFleet(&upstream.Options{Dial: func(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) {
			mu.Lock()
			dials[key]++
			mu.Unlock()
			s := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("t", "")}}
			return s.Dial(h), nil
		}})
	}
	t.Cleanup(p.Close)
	return testPool{p, made}, closed, func(key string) int { mu.Lock(); defer mu.Unlock(); return dials[key] }
}

var spec = func() (config.Spec, error) {
	d := config.Duration(30 * time.Second)
	return config.Spec{Name: "s", Type: config.TransportStdio, Command: "x", ProtocolVersion: "2025-11-25",
		Timeouts: config.Timeouts{Connect: d, List: d, Call: d}}, nil
}

func waitClosed(t *testing.T, closed chan string, want string) {
	t.Helper()
	select {
	case got := <-closed:
		if got != want {
			t.Fatalf("closed %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%q's instances were not closed", want)
	}
}

func TestKeysShareNothing(t *testing.T) {
	p, _, dials := pool(t, new(time.Duration))
	ctx := context.Background()
	releaseA1, releaseA2, releaseB := p.Hold("alice"), p.Hold("alice"), p.Hold("bob")
	defer releaseB()
	a1, err := p.Client(ctx, "alice", "s", spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := p.Client(ctx, "alice", "s", spec, nil)
	b, err := p.Client(ctx, "bob", "s", spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 || a1 == b {
		t.Errorf("alice's two holds got %p and %p, bob %p: want alice's shared and bob's apart", a1, a2, b)
	}
	if dials("alice") != 1 || dials("bob") != 1 {
		t.Errorf("dials alice %d bob %d, want one each", dials("alice"), dials("bob"))
	}
	releaseA1()
	releaseA2()
	if st, _ := a1.State(); st == upstream.StateReady {
		t.Error("alice's instance still runs after her last hold ended (no idle time)")
	}
	if _, err := p.Client(ctx, "alice", "s", spec, nil); err == nil || !strings.Contains(err.Error(), "the caller's own instances have been stopped") {
		t.Errorf("a request of a key no longer held: %v", err)
	}
	if st, err := b.State(); st != upstream.StateReady {
		t.Errorf("bob's instance is %s after alice left: %v", st, err)
	}
}

func TestIdleInstancesOutliveTheLastHold(t *testing.T) {
	idle := time.Hour // nothing expires while the test holds again
	p, closed, dials := pool(t, &idle)
	ctx := context.Background()
	release := p.Hold("alice")
	c, err := p.Client(ctx, "alice", "s", spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
	// Held again before the idle time: the same instance, not a new one.
	release = p.Hold("alice")
	again, err := p.Client(ctx, "alice", "s", spec, nil)
	if err != nil || again != c || dials("alice") != 1 {
		t.Errorf("held again within the idle time: %p (was %p), %v, %d dials", again, c, err, dials("alice"))
	}
	idle = time.Millisecond
	release()
	waitClosed(t, closed, "alice")
	if st, _ := c.State(); st == upstream.StateReady {
		t.Error("the instance still runs after the idle time")
	}
}

func TestStartFailureNamesTheServer(t *testing.T) {
	p, _, _ := pool(t, new(time.Duration))
	defer p.Hold("alice")()
	_, err := p.Client(context.Background(), "alice", "s", func() (config.Spec, error) {
		return config.Spec{}, errNoCreds
	}, nil)
	if err == nil || !strings.Contains(err.Error(), `server "s": the caller's own instance could not start: no credentials`) {
		t.Errorf("%v", err)
	}
}

var errNoCreds = errorString("no credentials")

type errorString string

func (e errorString) Error() string { return string(e) }

// A reload that changes a server's entry stops every key's instance of it:
// the next use of each key starts a new one (from the new entry), and a
// key that has none is not given one.
func TestRestartStopsEveryKeysInstance(t *testing.T) {
	p, _, dials := pool(t, new(time.Duration))
	ctx := context.Background()
	releaseA, releaseB, releaseC := p.Hold("alice"), p.Hold("bob"), p.Hold("carol")
	defer releaseA()
	defer releaseB()
	defer releaseC()
	a, _ := p.Client(ctx, "alice", "s", spec, nil)
	b, _ := p.Client(ctx, "bob", "s", spec, nil)
	p.Restart(ctx, "s")
	for who, c := range map[string]*upstream.Client{"alice": a, "bob": b} {
		if st, _ := c.State(); st == upstream.StateReady {
			t.Errorf("%s's instance still runs after the restart", who)
		}
	}
	a2, err := p.Client(ctx, "alice", "s", spec, nil)
	if err != nil || a2 == a {
		t.Errorf("alice's next use got %p (err %v), want a new instance, not %p", a2, err, a)
	}
	if dials("alice") != 2 || dials("bob") != 1 || dials("carol") != 0 {
		t.Errorf("dials alice %d bob %d carol %d, want 2, 1 (until its next use) and 0", dials("alice"), dials("bob"), dials("carol"))
	}
}
