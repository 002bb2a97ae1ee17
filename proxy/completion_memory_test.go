package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// completion/complete by a namespaced prompt and a namespaced template URI
// reaches the owner with the server's own name or URI and every other byte
// of the params as the host sent them, the result comes back byte for
// byte, and a reference nobody owns is refused naming it. (The MCP
// organisation's servers are compared directly and through the trunk, one
// completion per argument, by TestDifferentialEverything and
// TestDifferentialConformance in cmd/mcptrunk.)
func TestCompletionRouting(t *testing.T) {
	const result = `{"completion":{"values":["Sales","Support"],"total":2, "hasMore":false}}`
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := &memserver.Server{
		Prompts:      []json.RawMessage{json.RawMessage(`{"name":"team","arguments":[{"name":"department"}]}`)},
		Templates:    []json.RawMessage{json.RawMessage(`{"uriTemplate":"demo://text/{id}","name":"text"}`)},
		Capabilities: json.RawMessage(`{"prompts":{},"resources":{},"completions":{}}`),
	}
	srv.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "completion/complete" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		mu.Lock()
		seen = append(seen, string(params))
		mu.Unlock()
		return json.RawMessage(result), nil
	}
	_, h := memTrunk(t, memserver.Set{"ev": srv}, nil, nil, nil)
	h.initialize(`{}`)

	for _, c := range []struct{ through, direct string }{
		{`{"ref":{"type":"ref/prompt","name":"mcp__ev__team"},"argument":{"name":"department","value":"S"},"context":{"arguments":{"x":"1"}}}`,
			`{"ref":{"type":"ref/prompt","name":"team"},"argument":{"name":"department","value":"S"},"context":{"arguments":{"x":"1"}}}`},
		{`{"ref":{"type":"ref/resource","uri":"mcptrunk://ev/demo://text/{id}"},"argument":{"name":"id","value":"12"}}`,
			`{"ref":{"type":"ref/resource","uri":"demo://text/{id}"},"argument":{"name":"id","value":"12"}}`},
	} {
		res, errObj := h.call("completion/complete", c.through)
		if string(res) != result {
			t.Errorf("completion/complete %s: %s (error %s), want exactly %s", c.through, res, errObj, result)
		}
		mu.Lock()
		last := seen[len(seen)-1]
		mu.Unlock()
		if last != c.direct {
			t.Errorf("the server got %s, want %s", last, c.direct)
		}
	}
	for params, says := range map[string]string{
		`{"ref":{"type":"ref/prompt","name":"mcp__ev__none"},"argument":{"name":"a","value":""}}`: `unknown prompt "mcp__ev__none"`,
		`{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"a","value":""}}`:               `unknown ref type "ref/tool"`,
		`{"argument":{"name":"a","value":""}}`:                                                    "params need a ref",
	} {
		_, errObj := h.call("completion/complete", params)
		var e struct{ Message string }
		_ = json.Unmarshal(errObj, &e)
		if !strings.Contains(e.Message, says) {
			t.Errorf("completion/complete %s: error %s, want it to say %q", params, errObj, says)
		}
	}
}
