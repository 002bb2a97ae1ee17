package proxy

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// What a host says of itself is its own: a client name and version of
// 200 KB each are logged clipped, on one short line, not whole.
func TestHostValuesClippedInLog(t *testing.T) {
	var log testkit.Buffer
	_, h := memTrunk(t, memserver.Set{}, nil, nil, &Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	huge := strings.Repeat("n", 200<<10)
	if res, errObj := h.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+huge+`","version":"`+huge+`"}}`); res == nil {
		t.Fatalf("initialize: %s", errObj)
	}
	var line string
	for l := range strings.Lines(log.String()) {
		if strings.Contains(l, "host connected") {
			line = l
		}
	}
	if line == "" || len(line) > 2*logkey.MaxValue+200 || !strings.Contains(line, strings.Repeat("n", logkey.MaxValue)+"…") {
		t.Errorf("the host connected line: %d bytes, want the client clipped to %d: %.400s", len(line), logkey.MaxValue, line)
	}
	if len(log.String()) > 8<<10 {
		t.Errorf("%d bytes of log for one initialize: %.400s", len(log.String()), log.String())
	}
}
