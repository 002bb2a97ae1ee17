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
			`{"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"x"}`},
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

// TestReplaceReservedMetaPathsAgree: the scanning path and encoding/json's
// (taken for what the scanner does not vouch for, here an escaped key)
// give the same members.
func TestReplaceReservedMetaPathsAgree(t *testing.T) {
	set := map[string]json.RawMessage{
		"io.modelcontextprotocol/protocolVersion": json.RawMessage(`"2026-07-28"`),
		"io.modelcontextprotocol/clientInfo":      json.RawMessage(`{"name":"mcptrunk","version":"1"}`),
	}
	decode := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	for _, in := range []string{
		`{"_meta":{"progressToken":"a","io.modelcontextprotocol/clientInfo":{"name":"h"},"x":[1,2]},"name":"t"}`,
		`{"_meta":{"progress\u0054oken":"a","io.modelcontextprotocol/clientInfo":{"name":"h"},"x":[1,2]},"name":"t"}`,
	} {
		got, err := ReplaceReservedMeta(json.RawMessage(in), set)
		if err != nil {
			t.Fatal(err)
		}
		meta := decode(got)["_meta"].(map[string]any)
		if meta["progressToken"] != "a" || len(meta["x"].([]any)) != 2 || meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" ||
			meta["io.modelcontextprotocol/clientInfo"].(map[string]any)["name"] != "mcptrunk" || len(meta) != 4 {
			t.Errorf("%s -> %s", in, got)
		}
	}
}

func TestObject(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b" : {"c":[1,2]} ,"s":"x:y","a":"last"}`,
		`{"\u0061":1,"b":{"c":[1,2]},"s":"x:y","a":"last"}`, // escaped key: encoding/json's path
		`{}`,
	} {
		got, err := Object([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("Object(%s) = %v, want %v", in, got, want)
		}
		for k, v := range want {
			var a, b any
			_ = json.Unmarshal(v, &a)
			if err := json.Unmarshal(got[k], &b); err != nil || mustMarshal(a) != mustMarshal(b) {
				t.Errorf("Object(%s)[%q] = %s, want %s", in, k, got[k], v)
			}
		}
	}
	if _, err := Object([]byte(`[1]`)); err == nil {
		t.Error("an array: no error")
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzReplaceReservedMeta: for any object, the result is valid JSON whose
// _meta has exactly the non-reserved members it had, with the same values,
// and the reserved keys set and no others; the rest of the object agrees.
func FuzzReplaceReservedMeta(f *testing.F) {
	for _, s := range []string{
		`{"_meta":{"progressToken":1,"io.modelcontextprotocol/x":2},"a":[1]}`,
		`{"a":1}`, `{"_meta":null}`, `{"_meta":{}}`, `{"_meta":{"k\u0020":"v"},"_meta":{"io.modelcontextprotocol/y":1}}`,
	} {
		f.Add(s)
	}
	set := map[string]json.RawMessage{"io.modelcontextprotocol/protocolVersion": json.RawMessage(`"2026-07-28"`)}
	f.Fuzz(func(t *testing.T, in string) {
		var before map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &before) != nil || before == nil {
			return
		}
		var oldMeta map[string]json.RawMessage
		if m, ok := before["_meta"]; ok && json.Unmarshal(m, &oldMeta) != nil {
			return // a _meta that is not an object is an error, checked elsewhere
		}
		out, err := ReplaceReservedMeta(json.RawMessage(in), set)
		if err != nil {
			t.Fatalf("ReplaceReservedMeta(%s): %v", in, err)
		}
		var after map[string]json.RawMessage
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("invalid result %s for %s: %v", out, in, err)
		}
		var newMeta map[string]any
		if err := json.Unmarshal(after["_meta"], &newMeta); err != nil {
			t.Fatalf("_meta of %s: %v", out, err)
		}
		want := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
		for k, v := range oldMeta {
			if !isReserved(k) {
				var x any
				_ = json.Unmarshal(v, &x)
				want[k] = x
			}
		}
		if mustMarshal(newMeta) != mustMarshal(want) {
			t.Fatalf("%s -> _meta %s, want %s", in, mustMarshal(newMeta), mustMarshal(want))
		}
		for k, v := range before {
			if k == "_meta" {
				continue
			}
			var a, b any
			_ = json.Unmarshal(v, &a)
			_ = json.Unmarshal(after[k], &b)
			if mustMarshal(a) != mustMarshal(b) {
				t.Fatalf("%s -> %s: member %q changed", in, out, k)
			}
		}
	})
}

// MetaValue gives what decoding _meta into a map gives, for every shape
// of _meta: the last of a repeated key, an escaped key, none for a _meta
// that is null, not an object or not valid JSON.
func TestMetaValueAsDecoded(t *testing.T) {
	for _, obj := range []string{
		`{"_meta":{"k":{"a":[1,2]},"j":"x"}}`,
		`{"_meta":{"k":1,"k":"last"}}`,
		`{"_meta":{"\u006b":true}}`,
		`{"_meta":{ "k" : "spaced" }}`,
		`{"_meta":null}`,
		`{"_meta":"k"}`,
		`{"_meta":{"k":}}`,
		`{"_meta":{"K":1}}`,
		`{"other":{"k":1}}`,
		`{"_meta":{"k":1},"_meta":{"j":2}}`,
	} {
		var want json.RawMessage
		var outer struct {
			Meta json.RawMessage `json:"_meta"`
		}
		var meta map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &outer) == nil && json.Unmarshal(outer.Meta, &meta) == nil {
			want = meta["k"]
		}
		if got := MetaValue(json.RawMessage(obj), "k"); string(got) != string(want) {
			t.Errorf("MetaValue(%s, k) = %s, want %s", obj, got, want)
		}
	}
}
