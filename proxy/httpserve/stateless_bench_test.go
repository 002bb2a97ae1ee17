package httpserve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// BenchmarkStatelessCall is one stateless 2026-07-28 tools/call through
// the HTTP handler to an in-memory server at each revision that answers at
// once: the per-request session, the routing and the translation, without
// sockets. Run it with -cpuprofile to see where a stateless request's CPU
// goes.
func BenchmarkStatelessCall(b *testing.B) {
	for _, revision := range []string{protocol.Revision2025, protocol.Stateless} {
		b.Run("server="+revision, func(b *testing.B) {
			b.Setenv("XDG_CACHE_HOME", b.TempDir()) // the catalog cache
			srv := &memserver.Server{Revision: revision, Tools: []json.RawMessage{memserver.Tool("hold", "answers at once")},
				Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
					return memserver.Text("released"), nil
				}}
			h := memTrunkHandler(b, revision, srv)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, statelessCall(i))
				if !strings.Contains(rec.Body.String(), `"released"`) {
					b.Fatalf("answer %d: %d %s", i, rec.Code, rec.Body)
				}
			}
		})
	}
}
