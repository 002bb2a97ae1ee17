package proxy

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// BenchmarkForwardedCall is the hot path of a small tools/call whose
// message needs no rewriting beyond the name: host -> trunk -> in-memory
// server and back, with nothing but pipes and the trunk's own code in
// between, at each revision (at 2026-07-28 the host's request carries its
// _meta, the trunk stamps its own on the request to the server and strips
// the server's from the result). Run it with -benchmem: allocs/op counts
// the whole round trip, including the host's pipe reader (one string per
// line it reads), so the trunk's share is allocs/op minus that one.
func BenchmarkForwardedCall(b *testing.B) {
	for _, rev := range []string{protocol.Revision2025, protocol.Stateless} {
		b.Run("revision="+rev, func(b *testing.B) { benchmarkForwardedCall(b, rev) })
	}
}

func benchmarkForwardedCall(b *testing.B, revision string) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"isError":false}`)
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("echo", "")}}
	srv.Handle = func(_ context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		return result, nil
	}
	var specs map[string]map[string]any
	meta := ""
	if revision == protocol.Stateless {
		srv.Revision = protocol.Stateless
		specs = map[string]map[string]any{"s": {"protocolVersion": protocol.Stateless}}
		// What a 2026-07-28 host sends on every request.
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"bench-host","version":"1.0.0"}}`
	}
	_, h := memTrunk(b, memserver.Set{"s": srv}, specs, nil, nil)
	if revision == protocol.Revision2025 {
		h.initialize(`{}`)
	}
	if res, errObj := h.call("tools/list", `{"x":0`+meta+`}`); !strings.Contains(string(res), "mcp__s__echo") {
		b.Fatalf("tools/list: %s %s", res, errObj)
	}
	// The request lines are built before the clock starts: only the
	// trunk's work is measured.
	lines := make([][]byte, b.N)
	for i := range lines {
		lines[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(1000+i) + `,"method":"tools/call","params":{"name":"mcp__s__echo","arguments":{"q":"x"}` + meta + `}}` + "\n")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range lines {
		if _, err := h.in.Write(lines[i]); err != nil {
			b.Fatal(err)
		}
		if got, ok := <-h.lines; !ok || !strings.Contains(got, `"text":"ok"`) {
			b.Fatalf("answer %q (open %v)", got, ok)
		}
	}
}
