package taskserver

import (
	"net/http/httptest"
	"testing"
)

// Start serves a Server with the conformance fixtures on loopback until the
// test ends, and returns the URL of its MCP endpoint.
func Start(t testing.TB) string {
	srv := New(Options{})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close() // ends its tasks and listens first: ts.Close waits for every handler
		ts.Close()
	})
	return ts.URL + "/mcp"
}
