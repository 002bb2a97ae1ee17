package proxy

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// BenchmarkForwardedCall is the hot path of a small tools/call whose
// message needs no rewriting beyond the name: host -> trunk -> in-memory
// server and back, with nothing but pipes and the trunk's own code in
// between. Run it with -benchmem: allocs/op counts the whole round trip,
// including the host's pipe reader (one string per line it reads), so the
// trunk's share is allocs/op minus that one.
func BenchmarkForwardedCall(b *testing.B) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"isError":false}`)
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("echo", "")}}
	srv.Handle = func(_ context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		return result, nil
	}
	_, h := memTrunk(b, memserver.Set{"s": srv}, nil, nil, nil)
	h.initialize(`{}`)
	if names := h.toolNames(); len(names) == 0 {
		b.Fatal("no tools listed")
	}
	// The request lines are built before the clock starts: only the
	// trunk's work is measured.
	lines := make([][]byte, b.N)
	for i := range lines {
		lines[i] = []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(1000+i) + `,"method":"tools/call","params":{"name":"mcp__s__echo","arguments":{"q":"x"}}}` + "\n")
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
