package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// Each request of a 2026-07-28 host reaches a 2026-07-28 server told that
// very request's capabilities (what the server may ask during it) and log
// level, none when it named none, whichever path forwards it (a tool call,
// a completion); the level logging/setLevel set does not replace it.
func TestStatelessRequestFactsReachTheServer(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string][]json.RawMessage{}
	)
	srv := &memserver.Server{
		Revision:     protocol.Stateless,
		Tools:        []json.RawMessage{memserver.Tool("echo", "")},
		Prompts:      []json.RawMessage{json.RawMessage(`{"name":"team","arguments":[{"name":"department"}]}`)},
		Capabilities: json.RawMessage(`{"tools":{},"prompts":{},"completions":{},"logging":{}}`),
	}
	srv.Handle = func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		seen[method] = append(seen[method], params)
		mu.Unlock()
		if method == "completion/complete" {
			return json.RawMessage(`{"completion":{"values":[]}}`), nil
		}
		return json.RawMessage(`{"content":[]}`), nil
	}
	_, h := memTrunk(t, memserver.Set{"s": srv}, map[string]map[string]any{"s": {"protocolVersion": protocol.Stateless}}, nil, nil)

	for _, req := range []struct{ caps, level string }{
		{`{"elicitation":{}}`, `"error"`},
		{`{"sampling":{}}`, ""},
		{`{"elicitation":{},"sampling":{}}`, `"debug"`},
	} {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + req.caps
		if req.level != "" {
			meta += `,"io.modelcontextprotocol/logLevel":` + req.level
		}
		meta += `}`
		for method, params := range map[string]string{
			"tools/call":          `{"name":"mcp__s__echo","arguments":{},` + meta + `}`,
			"completion/complete": `{"ref":{"type":"ref/prompt","name":"mcp__s__team"},"argument":{"name":"department","value":"S"},` + meta + `}`,
		} {
			if res, errObj := h.call(method, params); res == nil {
				t.Fatalf("%s: %s", method, errObj)
			}
			mu.Lock()
			got := seen[method][len(seen[method])-1]
			mu.Unlock()
			if caps := rawjson.MetaValue(got, protocol.MetaClientCapabilities); string(caps) != req.caps {
				t.Errorf("%s with capabilities %s reached the server with %s", method, req.caps, caps)
			}
			if level := string(rawjson.MetaValue(got, protocol.MetaLogLevel)); level != req.level {
				t.Errorf("%s with log level %q reached the server with %q", method, req.level, level)
			}
		}
	}
}
