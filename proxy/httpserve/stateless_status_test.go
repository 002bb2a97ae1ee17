package httpserve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// A stateless exchange's error response carries the HTTP status its
// transport gives the code; any other message keeps 200.
func TestErrorStatus(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want int
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method \"ping\" was removed"}}`, http.StatusNotFound},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"sampling"}}`, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"v","data":{"supported":["2026-07-28"]}}}`, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header"}}`, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal"}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"a server's own"}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[],"error":{"code":-32601}}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0},
	} {
		if got := errorStatus([]byte(c.msg)); got != c.want {
			t.Errorf("errorStatus(%s) = %d, want %d", c.msg, got, c.want)
		}
	}
}

// A request at the stateless revision names its method, and its tool,
// prompt or resource, in headers; a header sent must match the body. A
// discover probe that says no revision needs none.
func TestHeaderMismatchRequiredHeaders(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		name    string
		body    string
		headers map[string]string
		want    string // in the message; "" for none
	}{
		{"all headers", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}, ""},
		{"no Mcp-Method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
			nil, "Mcp-Method is missing"},
		{"no Mcp-Method, revision in the header only", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, "Mcp-Method is missing"},
		{"no Mcp-Name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`,
			map[string]string{"Mcp-Method": "tools/call"}, `Mcp-Name is missing: the body's tools/call names "echo"`},
		{"no Mcp-Name for a resource", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://a",` + meta + `}}`,
			map[string]string{"Mcp-Method": "resources/read"}, "Mcp-Name is missing"},
		{"a method without a name", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
			map[string]string{"Mcp-Method": "tools/list"}, ""},
		{"Mcp-Method disagrees", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
			map[string]string{"Mcp-Method": "prompts/list"}, "does not match the body's method"},
		{"a probe that says no revision", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
			nil, ""},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,` + meta + `}}`,
			nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			env, err := jsonrpc.PeekEnvelope([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got := headerMismatch(r, env)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("headerMismatch = %q, want %q", got, c.want)
			}
		})
	}
}

// The events of a session's stream carry ids, for resumption; a stateless
// request's carry none (SEP-2575: the revision resumes no stream), so that
// a client whose stream broke asks again instead of resuming at a replica
// that never had it.
func TestStatelessEventsUnnumbered(t *testing.T) {
	th := newTestHandler(t, Options{}, nil)
	read := func(session string, headers map[string]string, body string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, th.url, strings.NewReader(body))
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := th.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "data: ") {
			t.Fatalf("HTTP %d %q, want an event stream", resp.StatusCode, b)
		}
		return string(b)
	}
	stateless := read("", map[string]string{"Mcp-Method": "tools/list", "Mcp-Protocol-Version": "2026-07-28"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if strings.Contains(stateless, "\nid: ") || strings.HasPrefix(stateless, "id: ") {
		t.Errorf("a stateless request's events carry ids: %q", stateless)
	}
	session := read(th.initialize(), nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if !strings.HasPrefix(session, "id: ") {
		t.Errorf("a session's events carry no id: %q", session)
	}
}
