package proxy

import (
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// An app calls its server's tools by their own names: a name one
// namespaced server has goes there, an exported name keeps its meaning, a
// name two servers have is refused naming both, and a ui:// URI the host
// got from the trunk reads from the server it came from.
func TestAppCallsRouting(t *testing.T) {
	tr := sleepingTrunk(t, map[string]sleeper{
		"basic":   {tools: []string{"get-time", "refresh"}, resources: []string{"ui://mcp-app.html"}},
		"monitor": {tools: []string{"poll-system-stats", "refresh"}, resources: []string{"ui://mcp-app.html"}},
		"loose":   {unprefixed: true, tools: []string{"echo", "get-time"}},
	})
	for params, want := range map[string]string{
		`{"name":"poll-system-stats"}`:    "monitor",
		`{"name":"mcp__basic__get-time"}`: "basic",
		`{"name":"mcp__basic__refresh"}`:  "basic",
		`{"name":"get-time"}`:             "loose", // exported as it is by the unprefixed server: its own
		`{"name":"echo"}`:                 "loose",
	} {
		if got, err := routedTo(t, tr, "tools/call", params); got != want {
			t.Errorf("tools/call %s went to %q (%v), want %q", params, got, err, want)
		}
	}
	for uri, want := range map[string]string{"ui://basic/mcp-app.html": "basic", "ui://monitor/mcp-app.html": "monitor"} {
		if got, err := routedTo(t, tr, "resources/read", `{"uri":"`+uri+`"}`); got != want {
			t.Errorf("resources/read %s went to %q (%v), want %q", uri, got, err, want)
		}
	}
	_, err := routedTo(t, tr, "tools/call", `{"name":"refresh"}`)
	if e := jsonrpc.AsError(err); e == nil || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `"mcp__basic__refresh" (server "basic")`) || !strings.Contains(err.Error(), `"mcp__monitor__refresh" (server "monitor")`) {
		t.Errorf("an ambiguous bare name: %v, want -32602 naming both candidates", err)
	}
}
