package rawjson

import (
	"encoding/json"
	"testing"
)

func TestReplaceReservedMeta(t *testing.T) {
	set := map[string]json.RawMessage{"io.modelcontextprotocol/protocolVersion": json.RawMessage(`"2026-07-28"`)}
	for _, tc := range []struct {
		name string
		in   string
		set  map[string]json.RawMessage
		want string
	}{
		{"nothing to do", `{"name":"x"}`, nil, `{"name":"x"}`},
		{"empty stays empty", ``, nil, ``},
		{"null gets meta", `null`, set, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
		{"added at the end", `{"name":"x", "arguments":{"a":1}}`, set, `{"name":"x", "arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
		{"others kept, reserved replaced", `{"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2025-01-01","io.modelcontextprotocol/clientInfo":{"name":"h"}},"name":"x"}`, set,
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7},"name":"x"}`},
		{"reserved dropped", `{"_meta":{"progressToken":"t","io.modelcontextprotocol/serverInfo":{}},"content":[]}`, nil, `{"_meta":{"progressToken":"t"},"content":[]}`},
		{"meta left empty is removed", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"isError":false}`, nil, `{"content":[],"isError":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplaceReservedMeta(json.RawMessage(tc.in), tc.set)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if _, err := ReplaceReservedMeta(json.RawMessage(`{"_meta":[1]}`), set); err == nil {
		t.Error("a _meta that is not an object: no error")
	}
}

func TestDeleteFields(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"resultType":"complete","content":[{"t":"x"}], "ttlMs":0}`, `{"content":[{"t":"x"}]}`},
		{`{ "content" : [] , "resultType" : "complete" }`, `{"content" : []}`},
		{`{"resultType":"complete"}`, `{}`},
	} {
		got, err := DeleteFields(json.RawMessage(tc.in), "resultType", "ttlMs")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("DeleteFields(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON: %s", got)
		}
	}
}

func TestMetaString(t *testing.T) {
	obj := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","n":1}}`)
	if got := MetaString(obj, "io.modelcontextprotocol/protocolVersion"); got != "2026-07-28" {
		t.Errorf("got %q", got)
	}
	if got := MetaString(obj, "n"); got != "" {
		t.Errorf("a number read as a string: %q", got)
	}
	if got := MetaString(json.RawMessage(`{}`), "x"); got != "" {
		t.Errorf("absent: %q", got)
	}
}
