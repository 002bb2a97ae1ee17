package rawjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// scanFields is a fast path: whenever it answers, the answer must be the one
// encoding/json's Decoder gives (decoderFieldSpans, the reference), and
// whatever it declines must still get the reference's answer from
// fieldSpans.

var scanSeeds = []string{
	`{"name":"mcp__notes__echo","arguments":{"text":"the quick brown fox"},"_meta":{"progressToken":42}}`,
	` { "name" : "x" , "name":"y" } `,
	`{}`, ` {} `, `{ }`, `[]`, `null`, ``, `{`, `}`, `{"name"}`, `{"name":}`, `{"name":1,}`, `{"name":1}x`,
	`{"name":1}{}`, `{"a":[1,2,{"name":3}],"name":[]}`, `{"n\u0061me":"x"}`, `{"Name":"x"}`, `{"näme":"x"}`,
	`{"name":"\u00e9\n\t\"\\\/"}`, `{"name":"bad \x01 control"}`, `{"name":"\x"}`, `{"name":"\u12"}`,
	`{"name":-0.5e+10}`, `{"name":01}`, `{"name":-}`, `{"name":1.}`, `{"name":1e}`, `{"name":.5}`, `{"name":+1}`,
	`{"name":true,"b":false,"c":null}`, `{"name":tru}`, `{"name":nul}`, `{"name":truex}`,
	`{"name":"x"` + "\n" + `}`, "{\"name\":\"x\"}\n", "\t{\"name\":\"x\"}\r\n",
	`{"a":{"b":{"c":{"d":[[[[{}]]]]}}},"name":"deep"}`, `{"name":"\ud800"}`, `{"name":"` + "\xff" + `"}`,
	`{"name":1 2}`, `{"name" "x"}`, `{"name":[1 2]}`, `{"name":{"a" 1}}`, `{"name":{"a":1 "b":2}}`,
}

func FuzzScanFieldsMatchesDecoder(f *testing.F) {
	for _, s := range scanSeeds {
		for _, key := range []string{"name", "a", ""} {
			f.Add(s, key)
		}
	}
	f.Fuzz(func(t *testing.T, obj, key string) {
		checkScanFields(t, []byte(obj), key)
	})
}

func TestScanFieldsMatchesDecoder(t *testing.T) {
	for _, s := range scanSeeds {
		for _, key := range []string{"name", "a", "b", ""} {
			checkScanFields(t, []byte(s), key)
		}
	}
}

// Long strings cross the 8-byte stride with every kind of byte at every
// offset.
func TestScanFieldsLongStrings(t *testing.T) {
	for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, "é", "\x01", `"`, "\xff", `\x`} {
		for pos := range 17 {
			text := strings.Repeat("a", pos) + special + strings.Repeat("b", 20)
			checkScanFields(t, []byte(`{"name":"`+text+`","arguments":{"text":"`+text+`"}}`), "name")
			checkScanFields(t, []byte(`{"`+text+`":1,"name":"x"}`), "name")
		}
	}
}

func checkScanFields(t *testing.T, obj []byte, key string) {
	t.Helper()
	wantSpans, wantClosing, wantErr := decoderFieldSpans(obj, key)
	if spans, closing, ok := scanFields(nil, obj, key); ok {
		if wantErr != nil {
			t.Fatalf("scanFields(%q, %q) accepted what the decoder rejects: %v", obj, key, wantErr)
		}
		if !reflect.DeepEqual(spans, wantSpans) && (len(spans) > 0 || len(wantSpans) > 0) || closing != wantClosing {
			t.Fatalf("scanFields(%q, %q) = %v, %d; decoder: %v, %d", obj, key, spans, closing, wantSpans, wantClosing)
		}
	}
	spans, closing, err := fieldSpans(nil, obj, key)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("fieldSpans(%q, %q) error %v; decoder: %v", obj, key, err, wantErr)
	}
	if err == nil && (closing != wantClosing || len(spans) != len(wantSpans) || len(spans) > 0 && !reflect.DeepEqual(spans, wantSpans)) {
		t.Fatalf("fieldSpans(%q, %q) = %v, %d; decoder: %v, %d", obj, key, spans, closing, wantSpans, wantClosing)
	}
	// StringField and ReplaceString on top of it agree with encoding/json.
	if err != nil || len(spans) == 0 {
		return
	}
	last := spans[len(spans)-1]
	var want string
	wantStrErr := json.Unmarshal(obj[last[0]:last[1]], &want)
	got, gotErr := StringField(obj, key)
	if (gotErr == nil) != (wantStrErr == nil) || gotErr == nil && got != want {
		t.Fatalf("StringField(%q, %q) = %q, %v; encoding/json: %q, %v", obj, key, got, gotErr, want, wantStrErr)
	}
}

func FuzzAppendJSONStringMatchesMarshal(f *testing.F) {
	for _, s := range []string{"", "echo", "mcp__notes__echo", "a<b>&c", "quote\"back\\slash", "tab\t", "é", "\u2028", "\xff", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		got, err := appendJSONString(nil, s)
		if err != nil || string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, %v; json.Marshal: %s", s, got, err, want)
		}
	})
}
