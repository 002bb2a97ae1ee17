package rawjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// rawjsonPretty is a pretty-printed tool as a server might send it, with the
// key "name" also appearing deeper (a property called name) and as text.
const rawjsonPretty = `{
	"name": "read_file",
	"description": "reads \"name\": a file",
	"inputSchema": {
		"type": "object",
		"properties": {
			"name": {"type": "string"}
		}
	}
}`

func TestReplaceString(t *testing.T) {
	tests := []struct {
		name  string
		obj   string
		key   string
		value string
		want  string
	}{
		{
			name: "first key",
			obj:  `{"name":"a","description":"d","x":1}`,
			key:  "name", value: "V",
			want: `{"name":"V","description":"d","x":1}`,
		},
		{
			name: "middle key",
			obj:  `{"description":"d","name":"a","x":1}`,
			key:  "name", value: "V",
			want: `{"description":"d","name":"V","x":1}`,
		},
		{
			name: "last key",
			obj:  `{"description":"d","x":1,"name":"a"}`,
			key:  "name", value: "V",
			want: `{"description":"d","x":1,"name":"V"}`,
		},
		{
			name: "only key",
			obj:  `{"name":"a"}`,
			key:  "name", value: "V",
			want: `{"name":"V"}`,
		},
		{
			name: "nested key before top-level key is not touched",
			obj:  `{"inputSchema":{"properties":{"name":{"type":"string"}},"name":"inner"},"name":"top"}`,
			key:  "name", value: "V",
			want: `{"inputSchema":{"properties":{"name":{"type":"string"}},"name":"inner"},"name":"V"}`,
		},
		{
			name: "nested key in an array is not touched",
			obj:  `{"list":[{"name":"x"},{"name":"y"}],"name":"top","z":[]}`,
			key:  "name", value: "V",
			want: `{"list":[{"name":"x"},{"name":"y"}],"name":"V","z":[]}`,
		},
		{
			name: "key only nested: appended at top level",
			obj:  `{"a":{"name":"inner"}}`,
			key:  "name", value: "V",
			want: `{"a":{"name":"inner"},"name":"V"}`,
		},
		{
			name: "key only inside a string value: appended",
			obj:  `{"description":"\"name\":\"x\"","title":"name"}`,
			key:  "name", value: "V",
			want: `{"description":"\"name\":\"x\"","title":"name","name":"V"}`,
		},
		{
			name: "whitespace around everything is kept",
			obj:  "{ \"name\" :\t\"a\" ,\n \"b\" : 1 }",
			key:  "name", value: "V",
			want: "{ \"name\" :\t\"V\" ,\n \"b\" : 1 }",
		},
		{
			name: "pretty-printed object",
			obj:  rawjsonPretty,
			key:  "name", value: "mcp__fs__read_file",
			want: strings.Replace(rawjsonPretty, `"name": "read_file"`, `"name": "mcp__fs__read_file"`, 1),
		},
		{
			name: "leading and trailing whitespace outside the object",
			obj:  " \n{\"name\":\"a\"}\n ",
			key:  "name", value: "V",
			want: " \n{\"name\":\"V\"}\n ",
		},
		{
			name: "missing key, empty object",
			obj:  `{}`,
			key:  "name", value: "V",
			want: `{"name":"V"}`,
		},
		{
			name: "missing key, empty object with whitespace",
			obj:  "{ \n }",
			key:  "name", value: "V",
			want: "{ \n \"name\":\"V\"}",
		},
		{
			name: "missing key, non-empty object",
			obj:  `{"a":1,"b":{"c":[1,2]}}`,
			key:  "name", value: "V",
			want: `{"a":1,"b":{"c":[1,2]},"name":"V"}`,
		},
		{
			name: "missing key, pretty-printed object",
			obj:  "{\n  \"a\": 1\n}",
			key:  "name", value: "V",
			want: "{\n  \"a\": 1\n,\"name\":\"V\"}",
		},
		{
			name: "missing key, whitespace before and after the object",
			obj:  " {} ",
			key:  "name", value: "V",
			want: ` {"name":"V"} `,
		},
		{
			name: "missing key, whitespace before a non-empty object",
			obj:  "\t{\"a\":1}\n",
			key:  "name", value: "V",
			want: "\t{\"a\":1,\"name\":\"V\"}\n",
		},
		{
			name: "missing key that needs escaping",
			obj:  `{"a":1}`,
			key:  `we"ird\key`, value: "V",
			want: `{"a":1,"we\"ird\\key":"V"}`,
		},
		{
			name: "unicode key and value",
			obj:  `{"名前":"値","b":"é"}`,
			key:  "名前", value: "ünïcødé ✓",
			want: `{"名前":"ünïcødé ✓","b":"é"}`,
		},
		{
			name: "key written with escapes matches its decoded form",
			obj:  `{"n\u0061me":"a","b":2}`,
			key:  "name", value: "V",
			want: `{"n\u0061me":"V","b":2}`,
		},
		{
			name: "escaped unicode key",
			obj:  `{"\u540d\u524d":"a"}`,
			key:  "名前", value: "V",
			want: `{"\u540d\u524d":"V"}`,
		},
		{
			name: "escapes in the old value and in neighbours are kept",
			obj:  `{"x":"\u00e9\n","name":"a\"b\\c\u0000","y":"\/"}`,
			key:  "name", value: "V",
			want: `{"x":"\u00e9\n","name":"V","y":"\/"}`,
		},
		{
			name: "new value with quotes, backslashes and control characters",
			obj:  `{"name":"a"}`,
			key:  "name", value: "q\"b\\s\n\t\x01",
			want: `{"name":"q\"b\\s\n\t\u0001"}`,
		},
		{
			// Documented: values are encoded with encoding/json, which escapes
			// <, > and & (HTML-safe) and U+2028/U+2029. The JSON means the
			// same string.
			name: "new value is HTML-escaped by encoding/json",
			obj:  `{"uri":"x"}`,
			key:  "uri", value: "https://h/?a=1&b=<2>\u2028",
			want: `{"uri":"https://h/?a=1\u0026b=\u003c2\u003e\u2028"}`,
		},
		{
			name: "old value is an object",
			obj:  `{"a":1,"name":{"name":"deep","x":[{"name":1}]},"z":true}`,
			key:  "name", value: "V",
			want: `{"a":1,"name":"V","z":true}`,
		},
		{
			name: "old value is an array",
			obj:  `{"name":[1,"two",{"three":3}] ,"z":null}`,
			key:  "name", value: "V",
			want: `{"name":"V" ,"z":null}`,
		},
		{
			name: "old value is a number followed by whitespace",
			obj:  `{"name":-1.5e+10 , "z":0}`,
			key:  "name", value: "V",
			want: `{"name":"V" , "z":0}`,
		},
		{
			name: "old value is a number at the end",
			obj:  `{"z":0,"name":12}`,
			key:  "name", value: "V",
			want: `{"z":0,"name":"V"}`,
		},
		{
			name: "old value is null",
			obj:  `{"name":null}`,
			key:  "name", value: "V",
			want: `{"name":"V"}`,
		},
		{
			name: "empty key",
			obj:  `{"":1,"a":2}`,
			key:  "", value: "V",
			want: `{"":"V","a":2}`,
		},
		{
			name: "keys are case-sensitive",
			obj:  `{"Name":"a"}`,
			key:  "name", value: "V",
			want: `{"Name":"a","name":"V"}`,
		},
		{
			// Duplicate keys: encoding/json (and JavaScript's JSON.parse) let
			// the last one win, and upstream.itemKey reads keys that way. Every
			// occurrence is replaced, so whichever one a reader believes, it
			// sees the new value; the bytes between them are kept.
			name: "duplicate keys: every occurrence is replaced",
			obj:  `{"name":"a","x":{"name":"n"},"name":"b"}`,
			key:  "name", value: "V",
			want: `{"name":"V","x":{"name":"n"},"name":"V"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.obj)
			got, err := ReplaceString(in, tt.key, tt.value)
			if err != nil {
				t.Fatalf("ReplaceString(%s, %q, %q): %v", tt.obj, tt.key, tt.value, err)
			}
			if string(got) != tt.want {
				t.Errorf("ReplaceString(%s, %q, %q)\n got %s\nwant %s", tt.obj, tt.key, tt.value, got, tt.want)
			}
			if string(in) != tt.obj {
				t.Errorf("ReplaceString modified its input: %s", in)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
			if s, err := StringField(got, tt.key); err != nil || s != tt.value {
				t.Errorf("StringField(output, %q) = %q, %v; want %q", tt.key, s, err, tt.value)
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil || m[tt.key] != tt.value {
				t.Errorf("json.Unmarshal(output)[%q] = %v (%v); want %q", tt.key, m[tt.key], err, tt.value)
			}
		})
	}
}

// TestReplaceStringDoesNotAlias checks that the result never shares memory
// with the input: callers keep the catalog's items and splice them again.
func TestReplaceStringDoesNotAlias(t *testing.T) {
	in := []byte(`{"name":"a","b":1}`)
	for _, key := range []string{"name", "missing"} {
		out, err := ReplaceString(in, key, "V")
		if err != nil {
			t.Fatal(err)
		}
		before := string(in)
		for i := range out {
			out[i] = 'X'
		}
		if string(in) != before {
			t.Fatalf("key %q: output aliases the input", key)
		}
	}
}

func TestReplaceField(t *testing.T) {
	tests := []struct {
		name  string
		obj   string
		key   string
		value string
		want  string
	}{
		{
			name: "object value replaces a string",
			obj:  `{"a":1,"ref":"x","z":2}`,
			key:  "ref", value: `{"type":"ref/prompt","name":"p"}`,
			want: `{"a":1,"ref":{"type":"ref/prompt","name":"p"},"z":2}`,
		},
		{
			name: "array value replaces an array",
			obj:  `{"content": [ {"type":"text"} ] }`,
			key:  "content", value: `[{"type":"image"},1]`,
			want: `{"content": [{"type":"image"},1] }`,
		},
		{
			name: "number replaces a number",
			obj:  `{"n":1.5e3,"m":2}`,
			key:  "n", value: `7`,
			want: `{"n":7,"m":2}`,
		},
		{
			name: "value bytes are spliced verbatim, whitespace included",
			obj:  `{"n":1}`,
			key:  "n", value: "{ \"a\" :\n [ 1 ] }",
			want: "{\"n\":{ \"a\" :\n [ 1 ] }}",
		},
		{
			name: "missing key gets a raw object",
			obj:  `{"a":[]}`,
			key:  "b", value: `{"c":true}`,
			want: `{"a":[],"b":{"c":true}}`,
		},
		{
			name: "missing key in an empty object gets null",
			obj:  `{}`,
			key:  "b", value: `null`,
			want: `{"b":null}`,
		},
		{
			name: "nested object with the key, top level without",
			obj:  `{"ref":{"ref":1}}`,
			key:  "ref", value: `2`,
			want: `{"ref":2}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReplaceField(json.RawMessage(tt.obj), tt.key, []byte(tt.value))
			if err != nil {
				t.Fatalf("ReplaceField(%s, %q, %s): %v", tt.obj, tt.key, tt.value, err)
			}
			if string(got) != tt.want {
				t.Errorf("ReplaceField(%s, %q, %s)\n got %s\nwant %s", tt.obj, tt.key, tt.value, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
		})
	}
}

// rawjsonBadObjects are inputs that are not one well-formed JSON object.
var rawjsonBadObjects = []string{
	``,
	` `,
	`null`,
	`true`,
	`1`,
	`"name"`,
	`[]`,
	`[{"name":"a"}]`,
	`{`,
	`}`,
	`{"name"`,
	`{"name":`,
	`{"name":}`,
	`{"name":"a"`,
	`{"name":"a",}`,
	`{"a":1,"name":"b"`,
	`{"a":{"b":1}`,
	`{"a":1 "b":2}`,
	`{"a":1,,"b":2}`,
	`{name:"a"}`,
	`{'name':'a'}`,
	`{1:2}`,
	`{"name":"a"}{"b":1}`,
	`{"name":"a"} x`,
	`{"a":1}}`,
	`{"name":"a\x"}`,
	`{"name":nul}`,
	`{"name":01}`,
}

func TestReplaceStringRejectsNonObjects(t *testing.T) {
	for _, obj := range rawjsonBadObjects {
		for _, key := range []string{"name", "missing"} {
			got, err := ReplaceString(json.RawMessage(obj), key, "V")
			if err == nil {
				t.Errorf("ReplaceString(%q, %q) = %s, want an error", obj, key, got)
			}
			if got != nil {
				t.Errorf("ReplaceString(%q, %q) returned %s along with its error", obj, key, got)
			}
		}
	}
}

func TestFieldSpan(t *testing.T) {
	tests := []struct {
		obj   string
		key   string
		found bool
		value string // obj[start:end] when found
	}{
		{`{"a":1}`, "a", true, `1`},
		{`{"a" : "x y" }`, "a", true, `"x y"`},
		{`{"b":2,"a":{"a":[1, 2]}}`, "a", true, `{"a":[1, 2]}`},
		{"{\n\t\"a\": [\n\t\t1\n\t]\n}", "a", true, "[\n\t\t1\n\t]"},
		{`{"b":{"a":1}}`, "a", false, ``},
		{`{}`, "a", false, ``},
		{`{"a":true,"b":false}`, "b", true, `false`},
		{`{"a":null}`, "a", true, `null`},
		{`{"a\"b":1}`, `a"b`, true, `1`},
		{`{"\u0061":"\u0062"}`, "a", true, `"\u0062"`},
		{`{"a":1,"a":2}`, "a", true, `2`}, // the last of duplicates, like encoding/json
		{` {"a":-0.5E-3} `, "a", true, `-0.5E-3`},
	}
	for _, tt := range tests {
		start, end, found, err := FieldSpan(json.RawMessage(tt.obj), tt.key)
		if err != nil {
			t.Errorf("FieldSpan(%s, %q): %v", tt.obj, tt.key, err)
			continue
		}
		if found != tt.found {
			t.Errorf("FieldSpan(%s, %q) found = %v, want %v", tt.obj, tt.key, found, tt.found)
			continue
		}
		if found && tt.obj[start:end] != tt.value {
			t.Errorf("FieldSpan(%s, %q) spans %q, want %q", tt.obj, tt.key, tt.obj[start:end], tt.value)
		}
	}
	for _, obj := range rawjsonBadObjects {
		if _, _, _, err := FieldSpan(json.RawMessage(obj), "name"); err == nil {
			t.Errorf("FieldSpan(%q) succeeded, want an error", obj)
		}
	}
}

func TestStringField(t *testing.T) {
	tests := []struct {
		obj     string
		key     string
		want    string
		wantErr bool
	}{
		{obj: `{"name":"read"}`, key: "name", want: "read"},
		{obj: `{"a":1,"name":"read","b":2}`, key: "name", want: "read"},
		{obj: `{"name":"a\"b\\c\u00e9\n"}`, key: "name", want: "a\"b\\c\u00e9\n"},
		{obj: `{"name":"名前 ✓"}`, key: "name", want: "名前 ✓"},
		{obj: `{"n\u0061me":"x"}`, key: "name", want: "x"},
		{obj: `{"other":"x"}`, key: "name", want: ""},
		{obj: `{"inner":{"name":"x"}}`, key: "name", want: ""},
		{obj: `{}`, key: "name", want: ""},
		{obj: `{"name":null}`, key: "name", want: ""},
		{obj: `{"name":""}`, key: "name", want: ""},
		{obj: `{"name":"a","name":"b"}`, key: "name", want: "b"}, // last wins, as in encoding/json
		{obj: `{"name":1}`, key: "name", wantErr: true},
		{obj: `{"name":{"a":"b"}}`, key: "name", wantErr: true},
		{obj: `{"name":["a"]}`, key: "name", wantErr: true},
		{obj: `{"name":true}`, key: "name", wantErr: true},
		{obj: `["name"]`, key: "name", wantErr: true},
		{obj: `"name"`, key: "name", wantErr: true},
		{obj: `null`, key: "name", wantErr: true},
		{obj: `{"name":"a"`, key: "name", wantErr: true},
	}
	for _, tt := range tests {
		got, err := StringField(json.RawMessage(tt.obj), tt.key)
		if (err != nil) != tt.wantErr {
			t.Errorf("StringField(%s, %q) error = %v, wantErr %v", tt.obj, tt.key, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("StringField(%s, %q) = %q, want %q", tt.obj, tt.key, got, tt.want)
		}
	}
}

// TestRawjsonAgreesWithEncodingJSON checks ReplaceString against a decode,
// set, re-encode with encoding/json: the two must mean the same object, and
// StringField must read what encoding/json reads.
func TestRawjsonAgreesWithEncodingJSON(t *testing.T) {
	objs := []string{
		`{}`, `{"a":1}`, `{"name":"x","a":{"name":"y"}}`, rawjsonPretty,
		`{"name":"a","name":"b"}`, `{"n\u0061me":"a","name":"b"}`, `{"name":"a","n\u0061me":"b"}`,
		` { "b" : [ {"name" : 1} ] , "c":"\ud83d\ude00" } `,
	}
	for _, obj := range objs {
		rawjsonCheckAgainstStdlib(t, []byte(obj), "name", "mcp__s__x")
	}
}

// FuzzReplaceString checks, for any input, that ReplaceString fails exactly
// when the input is not a JSON object, and otherwise yields valid JSON that
// encoding/json decodes as the input with key set to value.
func FuzzReplaceString(f *testing.F) {
	f.Add(`{"name":"a"}`, "name", "V")
	f.Add(rawjsonPretty, "name", "mcp__s__x")
	f.Add(`{"a":{"name":1},"name":"b","name":"c"}`, "name", "<&>")
	f.Add(` {} `, "k", "")
	f.Add(`{"a":1`, "a", "v")
	for _, obj := range rawjsonBadObjects {
		f.Add(obj, "name", "v")
	}
	f.Fuzz(func(t *testing.T, obj, key, value string) {
		rawjsonCheckAgainstStdlib(t, []byte(obj), key, value)
	})
}

func rawjsonCheckAgainstStdlib(t *testing.T, obj []byte, key, value string) {
	t.Helper()
	var want map[string]any
	isObject := json.Valid(obj) && bytes.HasPrefix(bytes.TrimLeft(obj, " \t\r\n"), []byte("{"))
	if isObject {
		if err := json.Unmarshal(obj, &want); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", obj, err)
		}
	}
	got, err := ReplaceString(obj, key, value)
	if !isObject {
		if err == nil {
			t.Fatalf("ReplaceString(%q) = %q, want an error for a non-object", obj, got)
		}
		return
	}
	if err != nil {
		t.Fatalf("ReplaceString(%q, %q, %q): %v", obj, key, value, err)
	}
	var gotMap map[string]any
	if err := json.Unmarshal(got, &gotMap); err != nil {
		t.Fatalf("ReplaceString(%q, %q, %q) = %q: %v", obj, key, value, got, err)
	}
	// encoding/json replaces invalid UTF-8 when decoding; compare like with like.
	var k string
	kenc, _ := json.Marshal(key)
	_ = json.Unmarshal(kenc, &k)
	if s, ok := want[k].(string); (ok || want[k] == nil) && k == key {
		if read, err := StringField(obj, key); err != nil || read != s {
			t.Fatalf("StringField(%q, %q) = %q, %v; encoding/json reads %q", obj, key, read, err, s)
		}
	}
	var v any
	enc, _ := json.Marshal(value)
	_ = json.Unmarshal(enc, &v)
	want[k] = v
	if !reflect.DeepEqual(gotMap, want) {
		t.Fatalf("ReplaceString(%q, %q, %q) = %q\ndecodes to %v\nwant       %v", obj, key, value, got, gotMap, want)
	}
}
