package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsHost runs `mcptrunk serve --metrics 127.0.0.1:0` on cfg under a
// go-sdk host and returns it with the /metrics URL it logged.
func metricsHost(t *testing.T, ctx context.Context, cfg string) (*host, string) {
	t.Helper()
	h := startHost(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg, "--metrics", "127.0.0.1:0"), hostConfig{}, "2025-11-25")
	return h, metricsURL(t, ctx, h.stderr)
}

// metricsURL is the /metrics URL of the listener a trunk logged to stderr.
func metricsURL(t *testing.T, ctx context.Context, stderr *syncBuffer) string {
	t.Helper()
	line, err := waitStderrLine(ctx, stderr, 10*time.Second, "metrics listening")
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr)
	}
	_, addr, ok := strings.Cut(line, "addr=")
	if !ok {
		t.Fatalf("no addr in %q", line)
	}
	return "http://" + strings.Fields(addr)[0] + "/metrics"
}

// scrapeMetrics reads url as Prometheus does and parses it with its text
// parser.
func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return fams
}

// sample is the value of name's series with exactly these labels (a
// histogram's count), and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		for _, l := range m.Label {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// The counters at /metrics move by exactly the calls the host made, and
// the server's state gauge says ready.
func TestMetricsCountCalls(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	h, url := metricsHost(t, ctx, cfg)

	echo := func(args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	echo(map[string]any{"text": "warm"}) // the servers are up: the first call has waited for them
	series := func(item, outcome string) map[string]string {
		return map[string]string{"server": "notes", "method": "tools/call", "item": item, "outcome": outcome}
	}
	before := scrapeMetrics(t, url)
	ok0, _ := sample(before, "mcptrunk_requests_total", series("mcp__notes__echo", "ok"))
	lat0, _ := sample(before, "mcptrunk_request_duration_seconds", map[string]string{"server": "notes", "method": "tools/call"})

	const n = 7
	for i := range n {
		if res := echo(map[string]any{"text": fmt.Sprint(i)}); res.IsError {
			t.Fatalf("echo failed: %+v", res.Content)
		}
	}
	if res := echo(map[string]any{"text": 5}); !res.IsError {
		t.Fatal("echo of a number did not fail")
	}
	if _, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__no_such_tool"}); err == nil {
		t.Fatal("a call to a tool that does not exist succeeded")
	}

	after := scrapeMetrics(t, url)
	for _, c := range []struct {
		item, outcome string
		moved         float64
		was           float64
	}{
		{"mcp__notes__echo", "ok", n, ok0},
		{"mcp__notes__echo", "tool_error", 1, 0},
		{"mcp__notes__no_such_tool", "error", 1, 0},
	} {
		if got, _ := sample(after, "mcptrunk_requests_total", series(c.item, c.outcome)); got-c.was != c.moved {
			t.Errorf("mcptrunk_requests_total{item=%q,outcome=%q} moved by %v, want %v", c.item, c.outcome, got-c.was, c.moved)
		}
	}
	if got, _ := sample(after, "mcptrunk_request_duration_seconds", map[string]string{"server": "notes", "method": "tools/call"}); got-lat0 != n+2 {
		t.Errorf("latency histogram count moved by %v, want %d", got-lat0, n+2)
	}
	if got, ok := sample(after, "mcptrunk_server_state", map[string]string{"server": "notes", "state": "ready"}); !ok || got != 1 {
		t.Errorf(`mcptrunk_server_state{server="notes",state="ready"} = %v (present %v), want 1`, got, ok)
	}
	if got, _ := sample(after, "mcptrunk_server_start_time_seconds", map[string]string{"server": "notes"}); got < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("start time %v is not within the last minute", got)
	}
	if got, _ := sample(after, "mcptrunk_requests_in_flight", map[string]string{"server": "notes", "method": "tools/call"}); got != 0 {
		t.Errorf("%v requests in flight after the calls ended", got)
	}
}

// A lazy server's counters move by exactly the wakes and idle stops it
// goes through (not for the start and stop that fill its cache), at
// /metrics and in the status tool; the stdio host is one session.
func TestMetricsLazyCounts(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	notes := notesServer()
	notes["lazy"], notes["idleTimeout"] = true, "300ms"
	cfg := writeConfig(t, map[string]server{"notes": notes}, nil)
	c := startRaw(t, "mcptrunk", lazyTrunkCmd(newTag(t), t.TempDir(), "serve", "--config", cfg, "--metrics", "127.0.0.1:0"))
	c.initialize(ctx)
	url := metricsURL(t, ctx, c.stderr)
	sleeping := func() {
		t.Helper()
		if !waitFor(ctx, 20*time.Second, func() bool { return rawStatus(t, ctx, c)["notes"]["state"] == "sleeping" }) {
			t.Fatalf("notes never went to sleep: %v", rawStatus(t, ctx, c)["notes"])
		}
	}
	counts := func(starts, stops float64) {
		t.Helper()
		fams := scrapeMetrics(t, url)
		notes := map[string]string{"server": "notes"}
		if got, ok := sample(fams, "mcptrunk_server_lazy_starts_total", notes); !ok || got != starts {
			t.Errorf("mcptrunk_server_lazy_starts_total = %v (present %v), want %v", got, ok, starts)
		}
		if got, ok := sample(fams, "mcptrunk_server_idle_stops_total", notes); !ok || got != stops {
			t.Errorf("mcptrunk_server_idle_stops_total = %v (present %v), want %v", got, ok, stops)
		}
		if got, ok := sample(fams, "mcptrunk_sessions", map[string]string{}); !ok || got != 1 {
			t.Errorf("mcptrunk_sessions = %v (present %v), want 1", got, ok)
		}
	}
	sleeping() // the cache filled
	counts(0, 0)
	const wakes = 2
	for i := range wakes {
		if res := c.call(ctx, "tools/call", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "up"}}); res.Err != nil {
			t.Fatalf("call %d: %v", i, res.Err)
		}
		sleeping()
	}
	counts(wakes, wakes)
	st := rawStatus(t, ctx, c)["notes"]
	if st["lazyStarts"] != float64(wakes) || st["idleStops"] != float64(wakes) {
		t.Errorf("status tool: lazyStarts %v, idleStops %v; want %d each", st["lazyStarts"], st["idleStops"], wakes)
	}
	c.shutdown(15 * time.Second)
}

// The listener answers only this machine's own requests: a web page that
// rebinds its name to 127.0.0.1, or a script on another origin, is refused.
func TestMetricsRefusesBrowsers(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	_, url := metricsHost(t, ctx, cfg)
	own := strings.TrimSuffix(url, "/metrics")
	for _, c := range []struct {
		name, host, origin string
		want               int
	}{
		{"plain", "", "", http.StatusOK},
		{"own origin", "", own, http.StatusOK},
		{"another origin", "", "http://evil.example", http.StatusForbidden},
		{"another local port", "", "http://127.0.0.1:1", http.StatusForbidden},
		{"rebound name", "evil.example", "", http.StatusForbidden},
		{"localhost", "localhost", "", http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.host != "" {
			req.Host = c.host
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.name, resp.Status, c.want)
		}
	}
}

// trunk.metrics.listen serves /metrics as --metrics does, and the flag
// wins over it.
func TestMetricsFromConfig(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	busy, err := net.Listen("tcp", "127.0.0.1:0") // where the config points when the flag must win
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name, listen string
		flags        []string
	}{
		{"config", "127.0.0.1:0", nil},
		{"flag wins", busy.Addr().String(), []string{"--metrics", "127.0.0.1:0"}},
	} {
		cfg := writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"metrics": map[string]any{"listen": c.listen}})
		h := startHost(t, ctx, exec.Command(trunkBin, append([]string{"serve", "--config", cfg}, c.flags...)...), hostConfig{}, "2025-11-25")
		url := metricsURL(t, ctx, h.stderr)
		if strings.Contains(url, busy.Addr().String()) {
			t.Fatalf("%s: the listener is on the config's address %s, not the flag's", c.name, url)
		}
		if _, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatal(err)
		}
		series := map[string]string{"server": "notes", "method": "tools/call", "item": "mcp__notes__echo", "outcome": "ok"}
		if got, _ := sample(scrapeMetrics(t, url), "mcptrunk_requests_total", series); got != 1 {
			t.Errorf("%s: mcptrunk_requests_total%v = %v, want 1", c.name, series, got)
		}
	}
}

// A --metrics address other hosts could reach is refused before any
// server starts.
func TestMetricsLoopbackOnly(t *testing.T) {
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	for _, addr := range []string{"0.0.0.0:0", ":9464", "192.0.2.1:9464", "example.com:9464"} {
		_, stderr, code := runCLI(t, 30*time.Second, "serve", "--config", cfg, "--metrics", addr)
		if code != 1 || !strings.Contains(stderr, "only a loopback address") {
			t.Errorf("--metrics %s: exit %d, stderr:\n%s", addr, code, stderr)
		}
	}
	cfg = writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"metrics": map[string]any{"listen": "0.0.0.0:9464"}})
	if _, stderr, code := runCLI(t, 30*time.Second, "serve", "--config", cfg); code != 1 || !strings.Contains(stderr, "trunk.metrics.listen: must be a loopback address") {
		t.Errorf("trunk.metrics.listen 0.0.0.0:9464: exit %d, stderr:\n%s", code, stderr)
	}
}
