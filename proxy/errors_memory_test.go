package proxy

// Upstream JSON-RPC errors as sent (moved from cmd/mcptrunk's
// TestProtocolErrorsVerbatim, which compared the notes, npm and go-sdk
// servers' errors directly and through the trunk as processes).

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// The errors a server answers with (code, message, data) reach the host
// byte for byte, whatever the method: standard and custom codes, data of
// any shape with odd number forms and escapes, a message with characters
// JSON escapes.
func TestErrorsVerbatimInMemory(t *testing.T) {
	errs := map[string]*jsonrpc.Error{
		"resources/read": {Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"test://no-such-resource"}`)},
		"prompts/get":    {Code: jsonrpc.CodeInvalidParams, Message: "Invalid resourceType: \"Nope\" <must be Text|Blob> \u00e9"},
		"tools/call":     {Code: -32042, Message: "missing capability", Data: json.RawMessage(`{"required": ["sampling"], "n": 1.50, "x": null}`)},
	}
	srv := &memserver.Server{
		Tools:     []json.RawMessage{memserver.Tool("fails", "")},
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"resource-prompt"}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"test://static","name":"static"}`)},
		Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"test://{id}","name":"any"}`)},
	}
	srv.Handle = func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		if e, ok := errs[method]; ok {
			return nil, e
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
	}
	_, h := memTrunk(t, memserver.Set{"conformance": srv}, nil, nil, nil)
	h.initialize(`{}`)
	for _, c := range []struct{ method, params string }{
		{"resources/read", `{"uri":"mcptrunk://conformance/test://no-such-resource"}`},
		{"prompts/get", `{"name":"mcp__conformance__resource-prompt","arguments":{"resourceType":"Nope","resourceId":"1"}}`},
		{"tools/call", `{"name":"mcp__conformance__fails","arguments":{}}`},
		{"tools/call", `{"name":"mcp__conformance__fails","arguments":{},"requestState":"x-TAMPERED"}`},
	} {
		var sent bytes.Buffer // as the server's Conn writes it: no HTML escapes
		enc := json.NewEncoder(&sent)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(errs[c.method])
		want := bytes.TrimSpace(sent.Bytes())
		res, got := h.call(c.method, c.params)
		if string(got) != string(want) {
			t.Errorf("%s %s: the error changed on the way:\nsent:     %s\nreceived: %s (result %s)", c.method, c.params, want, got, res)
		}
	}
}

// What the host sent is not echoed whole: a method name and a tool name of
// 3 MB each get an answer of a few KB, and a request whose jsonrpc is not
// "2.0" gets -32600 without reaching a server.
func TestHugeNamesGetShortAnswers(t *testing.T) {
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("echo", "")}}
	_, h := memTrunk(t, memserver.Set{"notes": srv}, nil, nil, nil)
	h.initialize(`{}`)
	huge := strings.Repeat("x", 3<<20)
	for _, c := range []struct{ method, params string }{
		{huge, `{}`},
		{"tools/call", `{"name":"mcp__notes__` + huge + `","arguments":{}}`},
		{"prompts/get", `{"name":"` + huge + `"}`},
	} {
		_, errObj := h.call(c.method, c.params)
		if errObj == nil || len(errObj) > 4<<10 {
			t.Errorf("%.20s...: the error is %d bytes, want a few KB: %.200s", c.method, len(errObj), errObj)
		}
	}
	h.send(`{"jsonrpc":"1.0","id":"v1","method":"tools/list"}`)
	var m struct {
		ID    string
		Error *jsonrpc.Error
	}
	if line := h.next("the answer to jsonrpc 1.0"); json.Unmarshal([]byte(line), &m) != nil || m.ID != "v1" || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("a request with jsonrpc 1.0: %s, want -32600", line)
	}
}
