package jsonrpc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func pingHandler() handlerFuncs {
	return handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		if method == "ping" {
			return json.RawMessage(`{}`), nil
		}
		return nil, Errorf(CodeMethodNotFound, "method %q not found", method)
	}}
}

// A server side answers what it cannot take as a message, each with the
// code JSON-RPC gives it, and goes on serving.
func TestInvalidLinesAreAnswered(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, pingHandler(), &Options{AnswerInvalid: true})
	for _, tc := range []struct {
		line, want string
	}{
		{`not json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid JSON"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid JSON"}}`},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: JSON-RPC batches are not part of MCP since 2025-06-18; send one message per line"}}`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string or a number"}}`},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string or a number"}}`},
		{`{"jsonrpc":"2.0","id":9,"method":5}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"invalid request: \"method\" must be a string"}}`},
		{`"a string"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be a JSON object"}}`},
		{`{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: neither a request, a notification nor a response (no method and no id)"}}`},
	} {
		p.send(tc.line)
		p.expectLine(tc.want)
	}
	// Still serving.
	p.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":10,"result":{}}`)
}

// A response without an id is the peer's own complaint: answering it could
// start two peers answering each other forever.
func TestResponseWithoutIDIsNotAnswered(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, pingHandler(), &Options{AnswerInvalid: true})
	p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("the conn answered a response without an id: %q", rest)
	}
}

// A client side (the trunk towards a server) never answers junk: a server
// that floods stdout would only have its stdin filled.
func TestInvalidLinesAreNotAnsweredByDefault(t *testing.T) {
	leakCheck(t)
	opts, logs := captureLog()
	p := newRawPeer(t, pingHandler(), opts)
	p.send(`not json`)
	p.send(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("the conn answered junk: %q", rest)
	}
	if n := strings.Count(logs.String(), "ignoring a line that is not JSON-RPC"); n != 2 {
		t.Errorf("%d junk lines logged, want 2:\n%s", n, logs)
	}
}
