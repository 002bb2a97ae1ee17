package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzSeeds are lines a peer may send that are, or are nearly, messages.
var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":7,"result":{}}`,
	`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`,
	`not json`,
	`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":9,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"\u0000\ud800"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1,2`,
	`{"id":1,"id":2,"method":"ping","method":"other"}`,
	"\x00\x01\xff\xfe",
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
	`"str"`, `123`, `null`, `{}`, `{"method":""}`, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"id":1,"method":"ping"}`, `{"jsonrpc":2,"id":1,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", 5000) + `"}`,
}

// FuzzConnInput drives a Conn with arbitrary bytes from its peer, on both
// sides of the trunk (answering invalid input, as towards the host, and not,
// as towards an upstream). Whatever arrives: the Conn never panics, its
// handler only ever gets a method and params that are valid JSON (nothing
// malformed is passed on), every line it writes is a JSON-RPC response, and
// a valid request after the bytes is answered.
func FuzzConnInput(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s+"\n"+s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, answerInvalid bool) {
		var mu sync.Mutex
		var bad []string
		h := handlerFuncs{
			req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				checkPassedOn(&mu, &bad, method, params)
				return json.RawMessage(`{}`), nil
			},
			notif: func(method string, params json.RawMessage) { checkPassedOn(&mu, &bad, method, params) },
		}
		p := newRawPeer(t, h, &Options{AnswerInvalid: answerInvalid})
		if _, err := p.in.Write(append(bytes.ReplaceAll(data, []byte(`"fuzz-final"`), nil), '\n')); err != nil {
			t.Fatal(err)
		}
		p.send(`{"jsonrpc":"2.0","id":"fuzz-final","method":"ping"}`)
		deadline := time.Now().Add(waitLimit)
		for answered := false; !answered; {
			line := p.readLine()
			checkResponseLine(t, line)
			answered = bytes.Contains(line, []byte(`"id":"fuzz-final","result":{}`))
			if time.Now().After(deadline) {
				t.Fatal("the request after the fuzz input was not answered")
			}
		}
		if err := p.close(); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		for _, line := range p.rest() {
			checkResponseLine(t, line)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("passed on to the handler: %q", bad)
		}
	})
}

func checkPassedOn(mu *sync.Mutex, bad *[]string, method string, params json.RawMessage) {
	if method != "" && (len(params) == 0 || json.Valid(params)) {
		return
	}
	mu.Lock()
	*bad = append(*bad, method+" "+string(params))
	mu.Unlock()
}

// checkResponseLine fails unless line is one JSON-RPC response: the Conn
// under test only answers, it never sends requests of its own here.
func checkResponseLine(t *testing.T, line []byte) {
	t.Helper()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   *Error          `json:"error"`
	}
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 || json.Unmarshal(line, &m) != nil ||
		m.JSONRPC != "2.0" || len(m.ID) == 0 || m.Method != nil || (m.Result == nil) == (m.Error == nil) {
		t.Fatalf("the conn wrote a line that is not one JSON-RPC response: %.300q", line)
	}
}
