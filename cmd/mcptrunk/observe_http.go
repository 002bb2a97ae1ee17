package main

import (
	"net/http"

	"github.com/mcptrunk/mcptrunk/internal/metrics"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// observeMux is the observability listener's routes: /metrics, and
// whatever else reports on the trunk t adds its handler here.
func observeMux(t *proxy.Trunk, m *metrics.Metrics) *http.ServeMux {
	mux := http.NewServeMux()
	if m != nil {
		mux.Handle("GET /metrics", m.Handler())
	}
	mux.Handle("/", statusPageHandler(t))
	return mux
}
