package remote

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
		if got := headerValue(in); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", in, got, want)
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
		{"tools/list", `{"name":"x"}`, "", false},
		{"tools/call", `{}`, "", false},
	} {
		got, ok := principalName(tc.method, json.RawMessage(tc.params))
		if got != tc.want || ok != tc.ok {
			t.Errorf("principalName(%s, %s) = %q, %v", tc.method, tc.params, got, ok)
		}
	}
}
