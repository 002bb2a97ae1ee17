package limits

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// clock is a Limiter's clock moved by the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testLimiter is a Limiter whose every check must be made: a store that
// cannot be asked fails the test.
type testLimiter struct {
	*Limiter
	t testing.TB
}

func (l testLimiter) Allow(req Request) (Refusal, bool) {
	l.t.Helper()
	r, refused, err := l.Limiter.Allow(context.Background(), req)
	if err != nil {
		l.t.Fatalf("Allow(%+v): %v", req, err)
	}
	return r, refused
}

// newAtFunc makes a Limiter of rules on a clock the test moves.
type newAtFunc func(rules map[string]config.Limit) (testLimiter, *clock)

// eachStore runs test with the counts in memory and in Redis: the rules
// count the same in both.
func eachStore(t *testing.T, test func(t *testing.T, newAt newAtFunc)) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			var opts *Options
			if store == "redis" {
				opts = &Options{Shared: redisClient(t, testkit.StartRedis(t, testkit.RedisOptions{})), Store: "test"}
			}
			test(t, func(rules map[string]config.Limit) (testLimiter, *clock) {
				c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
				l := New(rules, opts)
				l.clock = c.now
				return testLimiter{l, t}, c
			})
		})
	}
}

// redisClient is a client of r for the test, closed when it ends.
func redisClient(t testing.TB, r *testkit.RedisServer) *redisconn.Client {
	opts, err := redisconn.ParseURL(r.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redisconn.New(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func perMinute(n int, server, tool string, by ...string) config.Limit {
	if len(by) == 0 {
		by = []string{config.LimitBySubject}
	}
	return config.Limit{Server: server, Tool: tool, By: by, Requests: n, Window: config.Duration(time.Minute)}
}

// TestBurstThenRefill: a rule of 20 a minute lets 20 through at once,
// refuses the 21st saying when (3s: one request's share of the minute),
// and lets one more through once that time has passed.
func TestBurstThenRefill(t *testing.T) {
	eachStore(t, func(t *testing.T, newAt newAtFunc) {
		l, c := newAt(map[string]config.Limit{"forecasts": perMinute(20, "weather", "forecast")})
		alice := Request{Subject: "alice", Server: "weather", Tool: "forecast"}
		for i := range 20 {
			if r, refused := l.Allow(alice); refused {
				t.Fatalf("call %d refused: %+v", i+1, r)
			}
		}
		r, refused := l.Allow(alice)
		if !refused || r.Limit != "forecasts" || r.RetryAfter != 3 || !r.RetryAt.Equal(c.now().Add(3*time.Second)) {
			t.Fatalf("the 21st: %+v (refused %v), want forecasts, retry in 3s", r, refused)
		}
		c.add(2 * time.Second)
		if r, refused := l.Allow(alice); !refused || r.RetryAfter != 1 {
			t.Errorf("2s later: %+v (refused %v), want refused, retry in 1s", r, refused)
		}
		c.add(time.Second)
		if r, refused := l.Allow(alice); refused {
			t.Errorf("3s later: refused %+v", r)
		}
		if _, refused := l.Allow(alice); !refused {
			t.Error("a second call 3s later went through: the refill is one per 3s")
		}
	})
}

// TestCountsAreApart: each subject has its own count; requests a rule does
// not match (another tool, another server) are not counted by it; a rule
// by tool keeps one count per tool.
func TestCountsAreApart(t *testing.T) {
	eachStore(t, func(t *testing.T, newAt newAtFunc) {
		l, _ := newAt(map[string]config.Limit{
			"forecasts": perMinute(2, "weather", "forecast"),
			"search":    perMinute(1, "*", "search_*", config.LimitBySubject, config.LimitByTool),
		})
		for range 2 {
			l.Allow(Request{Subject: "alice", Server: "weather", Tool: "forecast"})
		}
		if _, refused := l.Allow(Request{Subject: "alice", Server: "weather", Tool: "forecast"}); !refused {
			t.Error("alice's 3rd forecast went through")
		}
		for _, req := range []Request{
			{Subject: "bob", Server: "weather", Tool: "forecast"},
			{Subject: "alice", Server: "weather", Tool: "alerts"},
			{Subject: "alice", Server: "other", Tool: "forecast"},
			{Subject: "alice", Server: "weather"}, // prompts/get, resources/read: no tool
			{Subject: "alice", Server: "docs", Tool: "search_a"},
			{Subject: "alice", Server: "docs", Tool: "search_b"},
		} {
			if r, refused := l.Allow(req); refused {
				t.Errorf("%+v refused by %+v", req, r)
			}
		}
		if _, refused := l.Allow(Request{Subject: "alice", Server: "web", Tool: "search_a"}); !refused {
			t.Error("a 2nd search_a by alice went through (the count is per subject and tool, whatever the server)")
		}
	})
}

// TestRefusedCountsNowhere: a request one rule refuses takes nothing from
// another rule that matched it; the refusal named is the furthest retry.
func TestRefusedCountsNowhere(t *testing.T) {
	eachStore(t, func(t *testing.T, newAt newAtFunc) {
		l, _ := newAt(map[string]config.Limit{
			"all":   perMinute(10, "", ""),
			"tight": perMinute(1, "weather", "forecast"),
		})
		f := Request{Subject: "alice", Server: "weather", Tool: "forecast"}
		l.Allow(f)
		for range 5 {
			if r, refused := l.Allow(f); !refused || r.Limit != "tight" || r.RetryAfter != 60 {
				t.Fatalf("%+v (refused %v), want tight, 60s", r, refused)
			}
		}
		for i := range 9 {
			if r, refused := l.Allow(Request{Subject: "alice", Server: "notes"}); refused {
				t.Fatalf("request %d to notes refused by %+v: the refused forecasts were counted by all", i+1, r)
			}
		}
		if r, refused := l.Allow(Request{Subject: "alice", Server: "notes"}); !refused || r.Limit != "all" {
			t.Errorf("the 11th request: %+v, want refused by all", r)
		}
	})
}

// TestDailyQuota: a daily rule lets its requests through at any pace,
// refuses the next until midnight UTC, and starts afresh then.
func TestDailyQuota(t *testing.T) {
	eachStore(t, func(t *testing.T, newAt newAtFunc) {
		l, c := newAt(map[string]config.Limit{"day": {By: []string{config.LimitBySubject}, Requests: 3, Daily: true}})
		alice := Request{Subject: "alice", Server: "s"}
		for i := range 3 {
			if r, refused := l.Allow(alice); refused {
				t.Fatalf("request %d refused: %+v", i+1, r)
			}
		}
		midnight := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC) // the clock starts at 03:04:05 on the 2nd
		r, refused := l.Allow(alice)
		if !refused || r.Window != "day" || !r.RetryAt.Equal(midnight) || r.RetryAfter != int(midnight.Sub(c.now()).Seconds()) {
			t.Fatalf("the 4th: %+v (refused %v), want refused until midnight", r, refused)
		}
		if _, refused := l.Allow(Request{Subject: "bob", Server: "s"}); refused {
			t.Error("bob refused by alice's quota")
		}
		c.add(midnight.Sub(c.now()) - time.Second)
		if _, refused := l.Allow(alice); !refused {
			t.Error("a second before midnight: let through")
		}
		c.add(time.Second)
		if r, refused := l.Allow(alice); refused {
			t.Errorf("at midnight: refused %+v", r)
		}
	})
}

// TestConfigureKeepsUnchangedCounts: a reload that keeps a rule keeps its
// counts; a changed rule starts afresh.
func TestConfigureKeepsUnchangedCounts(t *testing.T) {
	eachStore(t, func(t *testing.T, newAt newAtFunc) {
		rules := map[string]config.Limit{"one": perMinute(1, "", "")}
		l, _ := newAt(rules)
		req := Request{Subject: "alice", Server: "s"}
		l.Allow(req)
		l.Configure(map[string]config.Limit{"one": perMinute(1, "", ""), "other": perMinute(5, "x", "")})
		if _, refused := l.Allow(req); !refused {
			t.Error("after a reload that kept the rule, its count was lost")
		}
		l.Configure(map[string]config.Limit{"one": perMinute(2, "", "")})
		if _, refused := l.Allow(req); refused {
			t.Error("after the rule changed, the old count still refused")
		}
		l.Configure(nil)
		if l.Rules() {
			t.Error("Rules after configuring none")
		}
	})
}

// TestRefusalForms: the JSON-RPC error and the tool result both carry the
// refusal, and RetryAfterOf finds it in either response, and in no other.
func TestRefusalForms(t *testing.T) {
	r := Refusal{Limit: "forecasts", Requests: 20, Window: "1m0s", RetryAfter: 3, RetryAt: time.Date(2026, 1, 2, 3, 4, 8, 0, time.UTC)}
	want := `limit "forecasts" refused this request (20 requests per 1m0s): try again in 3s, at 2026-01-02T03:04:08Z`
	e := r.Error()
	if e.Code != Code || e.Message != want {
		t.Errorf("Error() = %d %q, want %d %q", e.Code, e.Message, Code, want)
	}
	var back Refusal
	if err := json.Unmarshal(e.Data, &back); err != nil || back != r {
		t.Errorf("the error's data: %s (%v), want the refusal", e.Data, err)
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(r.ToolResult(), &res); err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != want {
		t.Errorf("ToolResult() = %s", r.ToolResult())
	}
	errMsg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "error": e})
	resMsg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(r.ToolResult())})
	for _, c := range []struct {
		msg           string
		secs          int
		isError, isOK bool
	}{
		{string(errMsg), 3, true, true},
		{string(resMsg), 3, false, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, 0, false, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"-32029"}}`, 0, false, false},
	} {
		secs, isError, ok := RetryAfterOf([]byte(c.msg))
		if secs != c.secs || isError != c.isError || ok != c.isOK {
			t.Errorf("RetryAfterOf(%s) = %d, %v, %v; want %d, %v, %v", c.msg, secs, isError, ok, c.secs, c.isError, c.isOK)
		}
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(error(e), &rpcErr) || !strings.Contains(rpcErr.Error(), "forecasts") {
		t.Errorf("the error: %v", e)
	}
}

// TestLines: check's lines name each rule, what it counts and per what.
func TestLines(t *testing.T) {
	got := Lines(map[string]config.Limit{
		"forecasts": perMinute(20, "weather", "forecast"),
		"all":       {By: []string{"subject", "server"}, Requests: 1000, Window: config.Duration(24 * time.Hour)},
		"daily":     {By: []string{"subject"}, Requests: 5000, Daily: true},
	})
	want := []string{
		"  all: 1000 per 24h0m0s, every request, counted per subject and server",
		"  daily: 5000 per day (UTC), every request, counted per subject",
		"  forecasts: 20 per 1m0s, calls of tools forecast of servers weather, counted per subject",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkAllow is the cost a limit check adds to a request: three
// rules, one of them matching by subject and tool, over 1,000 subjects;
// with the counts in memory, and in Redis on loopback (one script run a
// check: the latency it adds, and with parallel checks what one Redis
// answers).
func BenchmarkAllow(b *testing.B) {
	rules := map[string]config.Limit{
		"forecasts": perMinute(1_000_000, "weather", "forecast"),
		"all":       perMinute(1_000_000, "", "", config.LimitBySubject, config.LimitByServer),
		"other":     perMinute(10, "db", ""),
	}
	subjects := make([]string, 1000)
	for i := range subjects {
		subjects[i] = "user-" + strconv.Itoa(i)
	}
	check := func(b *testing.B, l *Limiter, i int) {
		if r, refused, err := l.Allow(context.Background(), Request{Subject: subjects[i%len(subjects)], Server: "weather", Tool: "forecast"}); refused || err != nil {
			b.Fatalf("refused: %+v, %v", r, err)
		}
	}
	b.Run("memory", func(b *testing.B) {
		l := New(rules, nil)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			check(b, l, i)
			i++
		}
	})
	b.Run("redis", func(b *testing.B) {
		l := New(rules, &Options{Shared: redisClient(b, testkit.StartRedis(b, testkit.RedisOptions{}))})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			check(b, l, i)
			i++
		}
	})
	b.Run("redis-parallel", func(b *testing.B) {
		l := New(rules, &Options{Shared: redisClient(b, testkit.StartRedis(b, testkit.RedisOptions{}))})
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				check(b, l, int(n.Add(1)))
			}
		})
	})
}

// BenchmarkAllowNoRules is the check with no trunk.limits.
func BenchmarkAllowNoRules(b *testing.B) {
	l := New(nil, nil)
	for b.Loop() {
		l.Allow(context.Background(), Request{Subject: "alice", Server: "weather", Tool: "forecast"})
	}
}
