package httpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// BenchmarkSessionCall is one tools/call in a 2025-11-25 session through
// the HTTP handler to an in-memory server that answers at once: the path
// make bench's HTTP workload measures, without sockets.
func BenchmarkSessionCall(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir()) // the catalog cache
	srv := &memserver.Server{Revision: protocol.Revision2025, Tools: []json.RawMessage{memserver.Tool("hold", "answers at once")},
		Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return memserver.Text("released"), nil
		}}
	h := memTrunkHandler(b, protocol.Revision2025, srv)
	post := func(sid, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set(protocol.HeaderProtocolVersion, protocol.Revision2025)
		if sid != "" {
			r.Header.Set(protocol.HeaderSessionID, sid)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	init := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+protocol.Revision2025+`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	sid := init.Header().Get(protocol.HeaderSessionID)
	if init.Code != http.StatusOK || sid == "" {
		b.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ReportAllocs()
	for i := 1; b.Loop(); i++ {
		rec := post(sid, `{"jsonrpc":"2.0","id":`+itoa(int64(i))+`,"method":"tools/call","params":{"name":"mcp__m__hold","arguments":{}}}`)
		if !strings.Contains(rec.Body.String(), `"released"`) {
			b.Fatalf("answer %d: %d %s", i, rec.Code, rec.Body)
		}
	}
}
