package proxy

import (
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// TestStatelessBadParamsNamed: at the stateless revision, a _meta or listen
// of the wrong shape gets -32602 naming the member, and the trunk answers
// the next request.
func TestStatelessBadParamsNamed(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers":{}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	h := servePipes(t, New(cfg, nil))
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, `\"io.modelcontextprotocol/protocolVersion\" must be a string`},
		{`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":"x",` + meta + `}}`, `params.notifications must be an object`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`, `"resultType":"complete"`},
	} {
		h.send(tc.line)
		if l := h.next(tc.line); !strings.Contains(l, tc.want) {
			t.Errorf("%s\n-> %s\nwant %s", tc.line, l, tc.want)
		}
	}
}
