package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// TestParkedExchangesLeaveNothing: a stateless host's calls to a 2025
// upstream that asks for input, one abandoned (never retried), one retried
// without the answer, and one still waiting when the trunk shuts down,
// leave no exchange, no parked request and no goroutine behind.
func TestParkedExchangesLeaveNothing(t *testing.T) {
	srv2025 := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("test_elicitation", "asks the client")}}
	defer verifyNoLeaks(t, goleak.IgnoreCurrent(), srv2025)
	srv2025.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/call" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		answer, err := srv2025.Conn().Call(ctx, "elicitation/create", json.RawMessage(`{"message":"m","requestedSchema":{"type":"object","properties":{}}}`))
		if err != nil {
			return nil, err
		}
		return memserver.Text("elicited: " + string(answer)), nil
	}
	tr, mh := memTrunk(t, memserver.Set{"rev2025": srv2025}, map[string]map[string]any{
		"rev2025": {"timeouts": map[string]string{"call": "2s"}},
	}, nil, nil)
	h := mh.pipeHost
	answer := h.answer
	send := h.send
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	const call = `"method":"tools/call","params":{"name":"mcp__rev2025__test_elicitation","arguments":{"message":"m"},` + meta + `}}`

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
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp__rev2025__test_elicitation","arguments":{"message":"m"},"requestState":` + mustQuote(*ir.RequestState) + `,` + meta + `}}`)
	if res := answer("4"); !strings.Contains(string(res["result"]), "no answer to input request") && !strings.Contains(string(res["error"]), "no answer to input request") {
		t.Errorf("a retry without the answer: %s %s", res["result"], res["error"])
	}
	waitParked(t, tr, 0)

	// A third call left waiting for the host's retry when the trunk shuts
	// down (a state the trunk did not issue changes nothing about it).
	send(`{"jsonrpc":"2.0","id":5,` + call)
	answer("5")
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"mcp__rev2025__test_elicitation","arguments":{"message":"m"},"requestState":"mcptrunk1.x",` + meta + `}}`)
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
	deadline := time.After(30 * time.Second)
	for {
		n, changed := tr.parked.Watch()
		if n == want {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d exchanges still open, want %d", n, want)
		}
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
