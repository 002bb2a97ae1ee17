package proxy

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"go.uber.org/goleak"
)

// TestParkedExchangesLeaveNothing: a stateless host's calls to a legacy
// upstream that asks for input, one abandoned (never retried), one retried
// without the answer, and one still waiting when the trunk shuts down,
// leave no exchange, no parked request and no goroutine behind.
func TestParkedExchangesLeaveNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "conformance")
	if err := testkit.GoBuild(root, "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"); err != nil {
		t.Fatal(err)
	}
	cfgJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"legacy": map[string]any{"command": bin, "protocolVersion": "2025-11-25", "timeouts": map[string]string{"call": "2s"}},
	}})
	cfg, err := config.Parse(strings.NewReader(string(cfgJSON)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	tr := New(cfg, nil)
	h := servePipes(t, tr)
	answer := h.answer
	send := h.send
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	const call = `"method":"tools/call","params":{"name":"mcp__legacy__test_elicitation","arguments":{"message":"m"},` + meta + `}}`

	send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	answer("1")

	// Abandoned: input_required, then no retry.
	send(`{"jsonrpc":"2.0","id":2,` + call)
	if res := answer("2"); !strings.Contains(string(res["result"]), `"resultType":"input_required"`) {
		t.Fatalf("abandoned call: %s", res["result"])
	}
	if n := tr.parked.Count(); n != 1 {
		t.Fatalf("%d exchanges open while one waits for the host, want 1", n)
	}
	waitParked(t, tr, 0)

	// A retry that answers nothing: the upstream's request gets an error
	// naming the missing answer, its call ends, and so does the exchange.
	send(`{"jsonrpc":"2.0","id":3,` + call)
	res := answer("3")
	var ir struct {
		RequestState *string `json:"requestState"`
	}
	if err := json.Unmarshal(res["result"], &ir); err != nil || ir.RequestState == nil {
		t.Fatalf("second call: %s", res["result"])
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp__legacy__test_elicitation","arguments":{"message":"m"},"requestState":` + mustQuote(*ir.RequestState) + `,` + meta + `}}`)
	if res := answer("4"); !strings.Contains(string(res["result"]), "no answer to input request") && !strings.Contains(string(res["error"]), "no answer to input request") {
		t.Errorf("a retry without the answer: %s %s", res["result"], res["error"])
	}
	waitParked(t, tr, 0)

	// A third call left waiting for the host's retry when the trunk shuts
	// down (a state the trunk did not issue changes nothing about it).
	send(`{"jsonrpc":"2.0","id":5,` + call)
	answer("5")
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"mcp__legacy__test_elicitation","arguments":{"message":"m"},"requestState":"mcptrunk1.x",` + meta + `}}`)
	if res := answer("6"); !strings.Contains(string(res["error"]), "requestState") {
		t.Errorf("a state in the trunk's form it did not issue: %s %s", res["result"], res["error"])
	}
	waitParked(t, tr, 1)

	_ = h.in.Close()
	if err := <-h.served; err != nil {
		t.Logf("Serve: %v", err)
	}
	if n := tr.parked.Count(); n != 0 {
		t.Errorf("%d exchanges open after shutdown", n)
	}
}

func waitParked(t *testing.T, tr *Trunk, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for tr.parked.Count() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d exchanges still open, want %d", tr.parked.Count(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
