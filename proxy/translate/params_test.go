package translate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Params of the wrong shape are refused naming the member, before anything
// is routed.
func TestParamsShapeErrors(t *testing.T) {
	for _, tc := range []struct{ params, want string }{
		{``, `tools/call: params are missing`},
		{`[1]`, `tools/call: params must be an object, got an array`},
		{`{}`, `tools/call: params.name is missing (the tool's name)`},
		{`{"name":5}`, `tools/call: params.name must be a string (the tool's name), got a number`},
		{`{"name":""}`, `tools/call: params.name is empty (the tool's name)`},
	} {
		_, err := RequiredString("tools/call", json.RawMessage(tc.params), "name", "the tool's name")
		if e := jsonrpc.AsError(err); e == nil || e.Code != jsonrpc.CodeInvalidParams || e.Message != tc.want {
			t.Errorf("params %s: %v, want -32602 %q", tc.params, err, tc.want)
		}
		_, err = RequiredName("tools/call", json.RawMessage(tc.params), "tool")
		if e := jsonrpc.AsError(err); e == nil || e.Message != tc.want {
			t.Errorf("RequiredName, params %s: %v, want %q", tc.params, err, tc.want)
		}
	}
	if name, err := RequiredName("prompts/get", json.RawMessage(`{"name":"p"}`), "prompt"); err != nil || name != "p" {
		t.Errorf("RequiredName of a good name: %q, %v", name, err)
	}
	if name, err := RequiredString("tools/call", json.RawMessage(`{"name":"x"}`), "name", ""); err != nil || name != "x" {
		t.Errorf("a good name: %q, %v", name, err)
	}
	for params, ok := range map[string]bool{`{"name":"x"}`: true, `{"arguments":null}`: true, `{"arguments":{}}`: true, `{"arguments":"x"}`: false, `{"arguments":[1]}`: false} {
		err := OptionalObject("tools/call", json.RawMessage(params), "arguments")
		if (err == nil) != ok {
			t.Errorf("arguments in %s: %v", params, err)
		}
		if err != nil && !strings.Contains(err.Error(), "params.arguments must be an object") {
			t.Errorf("arguments in %s: %v does not name the member", params, err)
		}
	}
}
