package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
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
	if _, err := newOTLP(t.Context(), func(k string) string { return env[k] }); err == nil {
		t.Error("http/json accepted")
	}
}
