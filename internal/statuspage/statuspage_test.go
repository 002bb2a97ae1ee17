package statuspage

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func snapshot(state upstream.State, errText string) Snapshot {
	return Snapshot{
		Servers: []upstream.Status{
			{Server: "notes", State: upstream.StateReady, Transport: "stdio", Since: time.Now().Add(-time.Minute), UptimeSeconds: 60,
				Protocol: "2026-07-28", Tools: 3, Templates: 1, Resources: 2, Apps: 2, Calls: 10, CallErrors: 1, MeanCallMillis: 2.5, Tasks: 2, ServerInfo: []byte(`{"name":"notes","version":"1.0"}`)},
			{Server: "chaos", State: state, Transport: "stdio", Since: time.Now(), Restarts: 2, Error: errText},
			{Server: "lazy", State: upstream.StateSleeping, Transport: "stdio", Since: time.Now(), Lazy: true, LazyStarts: 5, IdleStops: 4, CachedAt: time.Now().Add(-31 * time.Second)},
			{Server: "woken", State: upstream.StateReady, Transport: "stdio", Since: time.Now(), Lazy: true, LazyStarts: 1, CachedAt: time.Now().Add(-31 * time.Second)},
			{Server: "api", State: upstream.StateReady, Transport: "http", Since: time.Now(), MaxInFlight: 2, InFlight: 2, Queued: 1,
				Breaker: upstream.BreakerOpen, FailuresInRow: 3, BreakerRetryAt: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)},
		},
		MaxMessageBytes: 1 << 20, DroppedNotifications: 4, ParkedCalls: 1, Sessions: 3, PinMode: "warn",
		Pins: map[string]PinCounts{"chaos": {Drift: 1}}, Version: "test", Profiles: map[string]string{"weather": "the weather server alone", "ops": ""},
		Store: &Store{Kind: "redis", Where: "redis://:xxxxx@10.0.0.5:6379/0", Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Error: "dial tcp 10.0.0.5:6379: connection refused"},
	}
}

func get(t *testing.T, h http.Handler, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = "127.0.0.1:1"
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestPageShowsEveryServerEscaped(t *testing.T) {
	s := snapshot(upstream.StateRestarting, `exit status 3 <script>alert(1)</script>; last stderr: chaos: exiting on purpose`)
	w := get(t, New(func() Snapshot { return s }, nil), "/", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	body := w.Body.String()
	for _, want := range []string{`id="server-notes"`, `data-state="ready"`, `id="server-chaos"`, `data-state="restarting"`,
		"2026-07-28", "notes 1.0", "1 MiB", "dropped notifications", "warn: 1 drifted", "mean 2.5 ms", "ops, weather (the weather server alone)",
		"3 tools, 0 prompts, 2 resources, 1 template, 2 MCP Apps<", `class="badge apps"`, "10 (1 error)",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "<pre>chaos: exiting on purpose</pre>", `name="viewport"`,
		"redis redis://:xxxxx@10.0.0.5:6379/0: DOWN: dial tcp 10.0.0.5:6379: connection refused (since 2026-01-02T03:04:05Z)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, "<dt>tasks running</dt>"); n != 1 || !strings.Contains(body, "<dt>tasks running</dt><dd>2</dd>") {
		t.Errorf("%d servers show tasks running, want notes alone with 2", n)
	}
	if n := strings.Count(body, `class="badge apps"`); n != 1 {
		t.Errorf("%d apps badges, want 1: only notes ships apps", n)
	}
	if strings.Contains(body, "<script>alert") {
		t.Error("a server's error reached the page unescaped")
	}
	_, lazy, _ := strings.Cut(body, `id="server-lazy"`)
	lazy, _, _ = strings.Cut(lazy, "</article>")
	for _, want := range []string{"<dt>lazy starts</dt><dd>5</dd>", "<dt>idle stops</dt><dd>4</dd>"} {
		if !strings.Contains(lazy, want) {
			t.Errorf("the lazy server's card lacks %q:\n%s", want, lazy)
		}
	}
	if !strings.Contains(lazy, "catalog cached 31s ago") {
		t.Errorf("the sleeping server's card lacks its cache's age:\n%s", lazy)
	}
	_, woken, _ := strings.Cut(body, `id="server-woken"`)
	woken, _, _ = strings.Cut(woken, "</article>")
	if !strings.Contains(woken, "catalog live") || strings.Contains(woken, "31s") {
		t.Errorf("the card of a lazy server that just started shows its cache's age:\n%s", woken)
	}
	if n := strings.Count(body, "<dt>protection</dt>"); n != 1 ||
		!strings.Contains(body, "<dt>protection</dt><dd>maxInFlight 2: 2 in flight, 1 waiting; breaker open after 3 calls in a row without an answer: calls fail at once until 15:04:05</dd>") {
		t.Errorf("%d servers show protection, want api alone with its cap and open breaker", n)
	}
	if strings.Contains(body, "lazy starts</dt><dd>0") {
		t.Error("a server that is not lazy shows lazy starts")
	}
	if !strings.Contains(body, "<dt>host sessions</dt><dd>3</dd>") {
		t.Error("the page lacks the host sessions")
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Contains(body, "src=") {
		t.Error("the page refers to an external asset")
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'sha256-") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}

func TestEventsCarryTheLiveSection(t *testing.T) {
	var state atomic.Value
	state.Store(upstream.StateReady)
	h := New(func() Snapshot { return snapshot(state.Load().(upstream.State), "") }, &Options{Interval: 20 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	seenReady := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") && line != "" && !strings.HasPrefix(line, "event: ") && !strings.HasPrefix(line, "retry: ") {
			t.Fatalf("not an event stream line: %q", line)
		}
		if strings.Contains(line, `data-state="ready"`) && strings.Contains(line, `id="server-chaos"`) {
			seenReady = true
			state.Store(upstream.StateFailed)
		}
		if seenReady && strings.Contains(line, `id="server-chaos"`) && strings.Contains(line, `data-state="failed"`) {
			return
		}
	}
	t.Fatalf("the stream ended before showing the change: %v", sc.Err())
}

func TestShutdownEndsEventStreams(t *testing.T) {
	h := New(func() Snapshot { return snapshot(upstream.StateReady, "") }, nil)
	srv := httptest.NewUnstartedServer(h)
	srv.Start()
	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Config.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown waited for the event stream: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	srv.Close()
}

func TestGuard(t *testing.T) {
	h := Guard(New(func() Snapshot { return snapshot(upstream.StateReady, "") }, nil), "s3cret")
	cases := []struct {
		name, target, host string
		header             http.Header
		want               int
	}{
		{"token in the query", "/?token=s3cret", "127.0.0.1:1", nil, 200},
		{"bearer", "/", "localhost:1", http.Header{"Authorization": {"Bearer s3cret"}}, 200},
		{"no token", "/", "127.0.0.1:1", nil, 401},
		{"wrong token", "/?token=nope", "127.0.0.1:1", nil, 401},
		{"rebound name", "/?token=s3cret", "evil.example:1", nil, 403},
		{"other origin", "/events?token=s3cret", "127.0.0.1:1", http.Header{"Origin": {"http://evil.example"}}, 403},
		{"own origin", "/?token=s3cret", "[::1]:1", http.Header{"Origin": {"http://[::1]:1"}}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, c.target, nil)
			r.Host = c.host
			for k, v := range c.header {
				r.Header[k] = v
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Errorf("status %d, want %d: %s", w.Code, c.want, w.Body)
			}
			if strings.Contains(w.Body.String(), "s3cret") {
				t.Error("the token is on the page")
			}
		})
	}
}

func TestRates(t *testing.T) {
	r := newRates(5 * time.Second)
	t0 := time.Unix(1000, 0)
	st := func(calls int64) []upstream.Status { return []upstream.Status{{Server: "a", Calls: calls}} }
	r.observe(t0, st(0))
	if got := r.observe(t0.Add(2*time.Second), st(10))["a"]; got != 5 {
		t.Errorf("rate %v, want 5", got)
	}
	r.observe(t0.Add(6*time.Second), st(10))
	if got := r.observe(t0.Add(12*time.Second), st(10))["a"]; got != 0 {
		t.Errorf("rate %v once the calls stopped, want 0", got)
	}
}
