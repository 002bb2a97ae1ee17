package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
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
		{`{"jsonrpc":"1.0","id":11,"method":"ping"}`, `{"jsonrpc":"2.0","id":11,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\", not \"1.0\""}}`},
		{`{"id":12,"method":"ping"}`, `{"jsonrpc":"2.0","id":12,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\", and is missing"}}`},
		{`{"jsonrpc":2,"id":13,"method":"ping"}`, `{"jsonrpc":"2.0","id":13,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be a string"}}`},
		{`{"jsonrpc":"1.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\", not \"1.0\""}}`},
	} {
		p.send(tc.line)
		p.expectLine(tc.want)
	}
	// Still serving.
	p.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":10,"result":{}}`)
}

// An error's message that echoes what the peer sent (a method name of
// 3 MB) is clipped: the answer is a few KB, says how much it left out,
// and is still valid JSON when the cut falls inside a character.
func TestErrorMessagesAreClipped(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, pingHandler(), &Options{AnswerInvalid: true})
	for _, method := range []string{strings.Repeat("m", 3<<20), strings.Repeat("é", 3<<19)} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`)
		line := p.readLine()
		var m struct {
			Error *Error `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Error == nil || m.Error.Code != CodeMethodNotFound {
			t.Fatalf("the answer to a 3 MB method name: %v %.200s", err, line)
		}
		if len(line) > 4<<10 || len(m.Error.Message) > MaxErrorMessage || !strings.HasSuffix(m.Error.Message, "bytes clipped)") || !utf8.ValidString(m.Error.Message) {
			t.Errorf("the answer to a 3 MB method name is %d bytes, its message %d (%.60q...%q)", len(line), len(m.Error.Message), m.Error.Message, m.Error.Message[max(0, len(m.Error.Message)-40):])
		}
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":2,"result":{}}`)
}

// A response whose jsonrpc is not "2.0" is not taken as the answer, nor
// answered: the call it answers fails at once with why.
func TestResponseOfAnotherVersionFailsItsCall(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, pingHandler(), nil)
	done := make(chan error, 1)
	go func() {
		_, err := p.c.Call(context.Background(), "tools/list", nil)
		done <- err
	}()
	req := p.readRequest("tools/list")
	p.send(`{"jsonrpc":"1.0","id":` + string(req.ID) + `,"result":{}}`)
	err := <-done
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInternalError || !strings.Contains(rpcErr.Message, `not JSON-RPC 2.0: "jsonrpc" must be "2.0", not "1.0"`) || FromPeer(err) {
		t.Fatalf("a call answered with jsonrpc 1.0: %v", err)
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("the conn answered a response: %q", rest)
	}
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
