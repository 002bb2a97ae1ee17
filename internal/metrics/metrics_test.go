package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/upstream"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTest(t *testing.T) *Metrics {
	t.Helper()
	m, err := New(t.Context(), Options{Version: "test", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}

// scrape reads /metrics as Prometheus does and parses it with its parser.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the value of the family's series with exactly these labels
// (counter, gauge, or a histogram's count); ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
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

func request(m *Metrics, r observe.Request, res string, err error) {
	_, end := m.Begin(context.Background(), r)
	var result []byte
	if res != "" {
		result = []byte(res)
	}
	end(observe.Outcome{Result: result, Err: err, Duration: 3 * time.Millisecond})
}

func TestRequestsByOutcome(t *testing.T) {
	m := newTest(t)
	call := observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__echo", Params: []byte(`{"name":"mcp__notes__echo"}`)}
	for range 3 {
		request(m, call, `{"content":[]}`, nil)
	}
	request(m, call, `{"content":[],"isError":true}`, nil)
	request(m, call, "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "no"))
	request(m, call, "", fmt.Errorf("host went away: %w", context.Canceled))
	refusal := limits.Refusal{Limit: "echoes", Requests: 1, Window: "1m0s", RetryAfter: 60}
	request(m, call, string(refusal.ToolResult()), nil)
	request(m, observe.Request{Method: "prompts/get", Server: "notes", Item: "mcp__notes__greet"}, "", refusal.Error())
	read := observe.Request{Method: "resources/read", Server: "notes", Item: "mcptrunk://notes/any/uri"}
	request(m, read, `{"contents":[]}`, nil)
	request(m, observe.Request{Method: "tools/list"}, `{"tools":[]}`, nil)

	fams := scrape(t, m)
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"server": "notes", "method": "tools/call", "item": "mcp__notes__echo", "outcome": "ok"}, 3},
		{map[string]string{"server": "notes", "method": "tools/call", "item": "mcp__notes__echo", "outcome": "tool_error"}, 1},
		{map[string]string{"server": "notes", "method": "tools/call", "item": "mcp__notes__echo", "outcome": "error"}, 1},
		{map[string]string{"server": "notes", "method": "tools/call", "item": "mcp__notes__echo", "outcome": "cancelled"}, 1},
		{map[string]string{"server": "notes", "method": "tools/call", "item": "mcp__notes__echo", "outcome": "limited"}, 1},
		{map[string]string{"server": "notes", "method": "prompts/get", "item": "mcp__notes__greet", "outcome": "limited"}, 1},
		{map[string]string{"server": "notes", "method": "resources/read", "item": "", "outcome": "ok"}, 1},
		{map[string]string{"server": "", "method": "tools/list", "item": "", "outcome": "ok"}, 1},
	} {
		if got, _ := value(fams, "mcptrunk_requests_total", c.labels); got != c.want {
			t.Errorf("mcptrunk_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
	callLabels := map[string]string{"server": "notes", "method": "tools/call"}
	if got, _ := value(fams, "mcptrunk_request_duration_seconds", callLabels); got != 7 {
		t.Errorf("duration count = %v, want 7", got)
	}
	if got, _ := value(fams, "mcptrunk_request_params_bytes_total", callLabels); got != 7*float64(len(call.Params)) {
		t.Errorf("params bytes = %v, want %d", got, 7*len(call.Params))
	}
	want := float64(3*14 + 29 + len(refusal.ToolResult()))
	if got, _ := value(fams, "mcptrunk_response_result_bytes_total", callLabels); got != want {
		t.Errorf("result bytes = %v, want %v", got, want)
	}
	if got, ok := value(fams, "mcptrunk_requests_in_flight", callLabels); !ok || got != 0 {
		t.Errorf("in flight = %v (%v), want 0", got, ok)
	}
}

func TestInFlight(t *testing.T) {
	m := newTest(t)
	r := observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__slow"}
	_, end := m.Begin(context.Background(), r)
	labels := map[string]string{"server": "notes", "method": "tools/call"}
	if got, _ := value(scrape(t, m), "mcptrunk_requests_in_flight", labels); got != 1 {
		t.Errorf("in flight during the call = %v, want 1", got)
	}
	end(observe.Outcome{Result: []byte(`{}`)})
	if got, _ := value(scrape(t, m), "mcptrunk_requests_in_flight", labels); got != 0 {
		t.Errorf("in flight after the call = %v, want 0", got)
	}
}

// A host inventing names gets no series of its own past the bound.
func TestItemsBounded(t *testing.T) {
	m := newTest(t)
	for i := range maxItems + 10 {
		request(m, observe.Request{Method: "tools/call", Server: "notes", Item: fmt.Sprintf("mcp__notes__t%d", i)}, `{}`, nil)
	}
	fams := scrape(t, m)
	if n := len(fams["mcptrunk_requests_total"].Metric); n != maxItems+1 {
		t.Errorf("%d series, want %d (the bound and other)", n, maxItems+1)
	}
	if got, _ := value(fams, "mcptrunk_requests_total", map[string]string{"server": "notes", "method": "tools/call", "item": "other", "outcome": "ok"}); got != 10 {
		t.Errorf("other = %v, want 10", got)
	}
}

func TestStatus(t *testing.T) {
	m := newTest(t)
	since := time.Unix(1_800_000_000, 0)
	st := observe.Status{
		Servers: []upstream.Status{
			{Server: "notes", State: upstream.StateReady, Since: since, Restarts: 2, Tools: 5, Prompts: 1, Tasks: 3},
			{Server: "lazy", State: upstream.StateSleeping, Since: since, Lazy: true, LazyStarts: 4, IdleStops: 3},
			{Server: "api", State: upstream.StateReady, Since: since, MaxInFlight: 2, InFlight: 2, Queued: 5, Breaker: upstream.BreakerOpen},
		},
		DroppedNotifications: 7, ParkedCalls: 1, Sessions: 2,
		Pins: map[string]observe.PinCounts{"notes": {Drift: 3, Withheld: 2}},
	}
	if err := m.WatchStatus(func() observe.Status { return st }); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mcptrunk_server_state", map[string]string{"server": "notes", "state": "ready"}, 1},
		{"mcptrunk_server_state", map[string]string{"server": "notes", "state": "failed"}, 0},
		{"mcptrunk_server_state", map[string]string{"server": "lazy", "state": "sleeping"}, 1},
		{"mcptrunk_server_start_time_seconds", map[string]string{"server": "notes"}, 1_800_000_000},
		{"mcptrunk_server_restarts_total", map[string]string{"server": "notes"}, 2},
		{"mcptrunk_server_items", map[string]string{"server": "notes", "kind": "tools"}, 5},
		{"mcptrunk_pin_drift", map[string]string{"server": "notes"}, 3},
		{"mcptrunk_pin_withheld", map[string]string{"server": "notes"}, 2},
		{"mcptrunk_pin_drift", map[string]string{"server": "lazy"}, 0},
		{"mcptrunk_notifications_dropped_total", map[string]string{}, 7},
		{"mcptrunk_parked_calls", map[string]string{}, 1},
		{"mcptrunk_sessions", map[string]string{}, 2},
		{"mcptrunk_server_lazy_starts_total", map[string]string{"server": "lazy"}, 4},
		{"mcptrunk_server_idle_stops_total", map[string]string{"server": "lazy"}, 3},
		{"mcptrunk_server_lazy_starts_total", map[string]string{"server": "notes"}, 0},
		{"mcptrunk_tasks_running", map[string]string{"server": "notes"}, 3},
		{"mcptrunk_tasks_running", map[string]string{"server": "lazy"}, 0},
		{"mcptrunk_server_calls_in_flight", map[string]string{"server": "api"}, 2},
		{"mcptrunk_server_calls_queued", map[string]string{"server": "api"}, 5},
		{"mcptrunk_server_breaker_open", map[string]string{"server": "api"}, 1},
	} {
		if got, ok := value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := value(fams, "mcptrunk_server_start_time_seconds", map[string]string{"server": "lazy"}); ok {
		t.Error("a sleeping server has a start time")
	}
	for _, name := range []string{"mcptrunk_server_calls_in_flight", "mcptrunk_server_calls_queued", "mcptrunk_server_breaker_open"} {
		if _, ok := value(fams, name, map[string]string{"server": "notes"}); ok {
			t.Errorf("%s of a server without maxInFlight or a breaker", name)
		}
	}
}

func TestOTLPEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:4318/v1/metrics"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_METRICS_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_METRICS_EXPORTER": "otlp"}, true},
	} {
		if got := OTLPConfigured(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("OTLPConfigured(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}
