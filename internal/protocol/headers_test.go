package protocol

import (
	"encoding/json"
	"testing"
)

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"search":              "search",
		"test://static-text":  "test://static-text",
		"":                    "",
		" lead":               "=?base64?IGxlYWQ=?=",
		"café":                "=?base64?Y2Fmw6k=?=",
		"a\nb":                "=?base64?YQpi?=",
		"=?base64?eA==?=":     "=?base64?PT9iYXNlNjQ/ZUE9PT89?=",
		"=?base64?unfinished": "=?base64?unfinished",
	} {
		if got := HeaderValue(in); got != want {
			t.Errorf("HeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrincipalName(t *testing.T) {
	for _, tc := range []struct {
		method, params, want string
		ok                   bool
	}{
		{"tools/call", `{"name":"search","arguments":{"name":"x"}}`, "search", true},
		{"prompts/get", `{"name":"plan"}`, "plan", true},
		{"resources/read", `{"uri":"file:///a","name":"n"}`, "file:///a", true},
		{"tasks/get", `{"taskId":"t-1"}`, "t-1", true},
		{"tasks/update", `{"taskId":"t-1","inputResponses":{}}`, "t-1", true},
		{"tasks/cancel", `{"taskId":"t-1"}`, "t-1", true},
		{"tasks/list", `{"taskId":"t-1"}`, "", false},
		{"tools/list", `{"name":"x"}`, "", false},
		{"tools/call", `{}`, "", false},
		{"tools/call", `{"name":"a","name":"b"}`, "b", true},                                     // the last, as decoding reads it
		{"tools/call", `{"n\u0061me":"escaped"}`, "escaped", true},                               // an escaped key is the key
		{"tools/call", `{"name":"x\u00e9"}`, "x\u00e9", true},                                    // the string decoded
		{"tools/call", `{"name":null}`, "", false},                                               // no name
		{"tools/call", `{"name":7}`, "", false},                                                  // not a string
		{"tools/call", `{"name":"ok","_meta":{"io.modelcontextprotocol/x":[1,{}]}}`, "ok", true}, // _meta read past
		{"tools/call", `{"name":"x",}`, "", false},                                               // not JSON
	} {
		got, ok := PrincipalName(tc.method, json.RawMessage(tc.params))
		if got != tc.want || ok != tc.ok {
			t.Errorf("PrincipalName(%s, %s) = %q, %v", tc.method, tc.params, got, ok)
		}
	}
}

func TestParseHeaderValue(t *testing.T) {
	for _, in := range []string{"search", "", " lead", "café", "a\nb", "=?base64?eA==?=", "=?base64?unfinished"} {
		got, ok := ParseHeaderValue(HeaderValue(in))
		if !ok || got != in {
			t.Errorf("ParseHeaderValue(HeaderValue(%q)) = %q, %v", in, got, ok)
		}
	}
	if _, ok := ParseHeaderValue("=?base64?not base64!?="); ok {
		t.Error("a malformed encoded value was accepted")
	}
}
