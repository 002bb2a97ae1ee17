package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// With an OTLP endpoint in the environment the same instruments reach a
// collector too: Shutdown sends what was counted.
func TestOTLPExport(t *testing.T) {
	got := make(chan *colmetricpb.ExportMetricsServiceRequest, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &colmetricpb.ExportMetricsServiceRequest{}
		if r.URL.Path != "/v1/metrics" || proto.Unmarshal(body, req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		got <- req
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	m, err := New(t.Context(), Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.OTLP() {
		t.Fatal("OTLP export is off with an endpoint set")
	}
	_, end := m.Begin(context.Background(), observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__echo"})
	end(observe.Outcome{Result: []byte(`{}`)})
	if err := m.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := m.Shutdown(t.Context()); err != nil {
		t.Errorf("a second Shutdown: %v", err)
	}
	req := <-got
	var total int64
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				if mt.Name == "mcptrunk.requests" {
					for _, dp := range mt.GetSum().GetDataPoints() {
						total += dp.GetAsInt()
					}
				}
			}
		}
	}
	if total != 1 {
		t.Errorf("mcptrunk.requests over OTLP = %d, want 1", total)
	}
}

func TestOTLPProtocol(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
	if _, err := newPeriodic(func(k string) string { return env[k] }, nil, nil); err == nil {
		t.Error("http/json accepted")
	}
}

// requestsPoint is the value and temporality of mcptrunk.requests in an
// export, and the count of mcptrunk.request.duration; ok is false when the
// export has no point of it.
func requestsPoint(req *colmetricpb.ExportMetricsServiceRequest) (requests int64, durations uint64, temporality metricpb.AggregationTemporality, ok bool) {
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				switch mt.Name {
				case "mcptrunk.requests":
					for _, dp := range mt.GetSum().GetDataPoints() {
						requests += dp.GetAsInt()
						ok = true
					}
					temporality = mt.GetSum().GetAggregationTemporality()
				case "mcptrunk.request.duration":
					for _, dp := range mt.GetHistogram().GetDataPoints() {
						durations += dp.GetCount()
					}
				}
			}
		}
	}
	return requests, durations, temporality, ok
}

// Exports come every OTEL_METRIC_EXPORT_INTERVAL; with the delta
// preference each counts what happened since the one before.
func TestOTLPPeriodicDelta(t *testing.T) {
	got := make(chan *colmetricpb.ExportMetricsServiceRequest, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &colmetricpb.ExportMetricsServiceRequest{}
		if proto.Unmarshal(body, req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		select {
		case got <- req:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": srv.URL + "/v1/metrics", "OTEL_METRIC_EXPORT_INTERVAL": "10",
		"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "delta"}
	m, err := New(t.Context(), Options{Version: "test", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Shutdown(context.Background()) }()
	call := func() {
		_, end := m.Begin(context.Background(), observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__echo"})
		end(observe.Outcome{Result: []byte(`{}`)})
	}
	// nextNonZero waits for the next export that counts a request.
	nextNonZero := func() (int64, uint64, metricpb.AggregationTemporality) {
		for {
			select {
			case req := <-got:
				if n, d, tmp, ok := requestsPoint(req); ok && n != 0 {
					return n, d, tmp
				}
			case <-t.Context().Done():
				t.Fatal("no export counted the request")
			}
		}
	}
	call()
	if n, d, tmp := nextNonZero(); n != 1 || d != 1 || tmp != metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA {
		t.Errorf("first export: %d requests, %d durations, %v; want 1, 1, delta", n, d, tmp)
	}
	call()
	if n, d, _ := nextNonZero(); n != 1 || d != 1 {
		t.Errorf("the export after one more call: %d requests, %d durations; want 1 and 1 (a delta; cumulative would be 2)", n, d)
	}
}

func TestOTLPExportSettings(t *testing.T) {
	for _, kv := range [][2]string{{"OTEL_METRIC_EXPORT_INTERVAL", "1m"}, {"OTEL_METRIC_EXPORT_TIMEOUT", "-5"},
		{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes"}} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", kv[0]: kv[1]}
		if _, err := New(t.Context(), Options{Getenv: func(k string) string { return env[k] }}); err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%s=%s: %v, want an error naming it", kv[0], kv[1], err)
		}
	}
}
