package limits

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// TestSharedAcrossReplicas: two Limiters, each with a client of its own
// (two replicas), sharing one Redis hold one limit exactly: of 30 calls
// by one subject, sent at once and spread over both, 20 go through and 10
// are refused with the rule's name and a retry time; another subject's
// call goes through after them. The counts are on Redis's clock.
func TestSharedAcrossReplicas(t *testing.T) {
	r := testkit.StartRedis(t, testkit.RedisOptions{})
	rules := map[string]config.Limit{"forecasts": {Server: "weather", Tool: "forecast", By: []string{config.LimitBySubject}, Requests: 20, Window: config.Duration(time.Hour)}}
	replicas := []*Limiter{
		New(rules, &Options{Shared: redisClient(t, r), Store: r.URL()}),
		New(rules, &Options{Shared: redisClient(t, r), Store: r.URL()}),
	}
	alice := Request{Subject: "alice", Server: "weather", Tool: "forecast"}
	var mu sync.Mutex
	var wg sync.WaitGroup
	allowed := map[int]int{}
	var refusals []Refusal
	for i := range 30 {
		wg.Go(func() {
			r, refused, err := replicas[i%2].Allow(context.Background(), alice)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("call %d: %v", i, err)
			case refused:
				refusals = append(refusals, r)
			default:
				allowed[i%2]++
			}
		})
	}
	wg.Wait()
	if n := allowed[0] + allowed[1]; n != 20 || len(refusals) != 10 {
		t.Fatalf("%d calls went through (%d and %d by each replica), %d refused; want 20 and 10", n, allowed[0], allowed[1], len(refusals))
	}
	if allowed[0] == 0 || allowed[1] == 0 {
		t.Errorf("one replica let none through (%v): the calls were not spread", allowed)
	}
	for _, r := range refusals {
		// Of 20 an hour, one comes back every 3 minutes.
		if r.Limit != "forecasts" || r.RetryAfter < 170 || r.RetryAfter > 180 || r.RetryAt.IsZero() {
			t.Errorf("refusal %+v: want forecasts, retry in about 180s", r)
		}
	}
	if r, refused, err := replicas[1].Allow(context.Background(), Request{Subject: "bob", Server: "weather", Tool: "forecast"}); refused || err != nil {
		t.Errorf("bob after alice's 30: refused %+v, %v", r, err)
	}
}

// TestSharedDailyQuotaExact: a daily quota shared by two replicas, each
// checking from ten goroutines at once, lets exactly its number through.
func TestSharedDailyQuotaExact(t *testing.T) {
	r := testkit.StartRedis(t, testkit.RedisOptions{})
	rules := map[string]config.Limit{"day": {By: []string{config.LimitBySubject}, Requests: 37, Daily: true}}
	replicas := []*Limiter{New(rules, &Options{Shared: redisClient(t, r)}), New(rules, &Options{Shared: redisClient(t, r)})}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed, refused := 0, 0
	for g := range 20 {
		wg.Go(func() {
			for range 5 {
				r, no, err := replicas[g%2].Allow(context.Background(), Request{Subject: "alice", Server: "s"})
				mu.Lock()
				switch {
				case err != nil:
					t.Errorf("goroutine %d: %v", g, err)
				case no && r.Window != "day":
					t.Errorf("refusal %+v: want the daily quota's", r)
				case no:
					refused++
				default:
					allowed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 37 || refused != 63 {
		t.Errorf("%d let through, %d refused; want 37 and 63", allowed, refused)
	}
}

// TestSharedStoreDown: with Redis stopped, a check cannot be made: by
// default the request is refused with an error naming the store and the
// limit; with AllowUnavailable it goes through, still saying why it was
// not counted. Requests no rule matches need no store. Once Redis is back
// (empty, its scripts forgotten), checks are made again.
func TestSharedStoreDown(t *testing.T) {
	r := testkit.StartRedis(t, testkit.RedisOptions{})
	rules := map[string]config.Limit{"forecasts": perMinute(20, "weather", "forecast")}
	closed := New(rules, &Options{Shared: redisClient(t, r), Store: r.URL()})
	open := New(rules, &Options{Shared: redisClient(t, r), Store: r.URL(), AllowUnavailable: true})
	alice := Request{Subject: "alice", Server: "weather", Tool: "forecast"}
	for _, l := range []*Limiter{closed, open} {
		if _, refused, err := l.Allow(context.Background(), alice); refused || err != nil {
			t.Fatalf("with Redis up: refused %v, %v", refused, err)
		}
	}

	r.Stop()
	_, refused, err := closed.Allow(context.Background(), alice)
	var unavailable *UnavailableError
	if !refused || !errors.As(err, &unavailable) || unavailable.Allowed || unavailable.Limit != "forecasts" {
		t.Fatalf("failing closed with Redis down: refused %v, %v; want refused with an UnavailableError of forecasts", refused, err)
	}
	for _, want := range []string{`limit "forecasts"`, r.URL(), "unavailable", "refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if e := unavailable.RPCError(); !strings.Contains(e.Message, r.URL()) {
		t.Errorf("the JSON-RPC error: %+v", e)
	}
	if res := string(unavailable.ToolResult()); !strings.Contains(res, `"isError":true`) || !strings.Contains(res, r.URL()) {
		t.Errorf("the tool result: %s", res)
	}
	_, refused, err = open.Allow(context.Background(), alice)
	if refused || !errors.As(err, &unavailable) || !unavailable.Allowed || !strings.Contains(err.Error(), "let through") {
		t.Errorf("failing open with Redis down: refused %v, %v; want let through, with an UnavailableError saying so", refused, err)
	}
	if _, refused, err := closed.Allow(context.Background(), Request{Subject: "alice", Server: "notes", Tool: "echo"}); refused || err != nil {
		t.Errorf("a call no rule matches, with Redis down: refused %v, %v", refused, err)
	}

	r.Start()
	for _, l := range []*Limiter{closed, open} {
		if _, refused, err := l.Allow(context.Background(), alice); refused || err != nil {
			t.Errorf("with Redis back: refused %v, %v", refused, err)
		}
	}
}

// TestSharedFineRules: a rule finer than Redis's microseconds (a billion
// a minute: 60 ns a request) lets requests through rather than failing
// the script.
func TestSharedFineRules(t *testing.T) {
	r := testkit.StartRedis(t, testkit.RedisOptions{})
	l := New(map[string]config.Limit{"fine": {By: []string{config.LimitBySubject}, Requests: 1_000_000_000, Window: config.Duration(time.Minute)}},
		&Options{Shared: redisClient(t, r), Store: r.URL()})
	for i := range 3 {
		if r, refused, err := l.Allow(context.Background(), Request{Subject: "alice", Server: "s"}); refused || err != nil {
			t.Fatalf("request %d: refused %+v, %v", i+1, r, err)
		}
	}
}

// TestKeysNameNoSubject: the counts' keys hold the subject hashed, in
// Redis (where other programs on it see the names) and in memory, so
// they say nothing of who; each subject still has a count of its own.
func TestKeysNameNoSubject(t *testing.T) {
	const subject = "alice@example.com"
	rules := map[string]config.Limit{
		"window": {By: []string{config.LimitBySubject, config.LimitByServer}, Requests: 1, Window: config.Duration(time.Hour)},
		"day":    {By: []string{config.LimitBySubject}, Requests: 5, Daily: true},
	}
	leaks := func(key string) bool { return strings.Contains(key, "alice") || strings.Contains(key, "example.com") }
	allow := func(l *Limiter, subject string, want bool) {
		t.Helper()
		if r, refused, err := l.Allow(context.Background(), Request{Subject: subject, Server: "s"}); err != nil || refused == want {
			t.Fatalf("%s: refused %v (%+v), %v; want allowed %v", subject, refused, r, err, want)
		}
	}

	t.Run("redis", func(t *testing.T) {
		c := redisClient(t, testkit.StartRedis(t, testkit.RedisOptions{}))
		l := New(rules, &Options{Shared: c})
		allow(l, subject, true)
		allow(l, subject, false)
		allow(l, "bob", true)
		keys, err := redisconn.Strings(c.Do(context.Background(), "KEYS", "*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 4 {
			t.Errorf("keys %q, want 4: two rules, two subjects", keys)
		}
		for _, k := range keys {
			if leaks(k) {
				t.Errorf("key %q names the subject", k)
			}
		}
	})
	t.Run("memory", func(t *testing.T) {
		l := New(rules, nil)
		allow(l, subject, true)
		allow(l, subject, false)
		allow(l, "bob", true)
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.tat) != 2 || len(l.days) != 2 {
			t.Errorf("%d window counts and %d daily ones, want 2 and 2", len(l.tat), len(l.days))
		}
		for k := range l.tat {
			if leaks(k) {
				t.Errorf("key %q names the subject", k)
			}
		}
		for k := range l.days {
			if leaks(k) {
				t.Errorf("key %q names the subject", k)
			}
		}
	})
}
