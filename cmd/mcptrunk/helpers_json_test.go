package main

// JSON helpers: encoding params, reading members in order, and comparing
// results that went through the trunk with those sent directly.

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rawJSON returns params as JSON: strings and []byte are taken as JSON
// already.
func rawJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null")
	case json.RawMessage:
		return x
	case []byte:
		return x
	case string:
		return json.RawMessage(x)
	}
	return json.RawMessage(mustJSON(v))
}

// compact returns raw without insignificant whitespace; invalid JSON fails
// the test.
func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("invalid JSON %q: %v", raw, err)
	}
	return b.String()
}

// compactOrEmpty is compact, with "" for no JSON at all.
func compactOrEmpty(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	return compact(t, raw)
}

// field is one member of a JSON object, its value raw.
type field struct {
	key   string
	value json.RawMessage
}

// objectFields returns an object's members in the order they appear.
func objectFields(t testing.TB, raw []byte) []field {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		out = append(out, field{key: tok.(string), value: v})
	}
	return out
}

// getField returns the raw value of a top-level member ("" if absent).
func getField(t testing.TB, raw []byte, key string) json.RawMessage {
	t.Helper()
	for _, f := range objectFields(t, raw) {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

func getString(t testing.TB, raw []byte, key string) string {
	t.Helper()
	v := getField(t, raw, key)
	if v == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		t.Fatalf("field %q of %s is not a string", key, raw)
	}
	return s
}

// findItem returns the item of a list whose key field equals value.
func findItem(t testing.TB, items []json.RawMessage, key, value string) json.RawMessage {
	t.Helper()
	for _, it := range items {
		if getString(t, it, key) == value {
			return it
		}
	}
	return nil
}

// keysOf returns the key field of every item.
func keysOf(t testing.TB, items []json.RawMessage, key string) []string {
	t.Helper()
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, getString(t, it, key))
	}
	return out
}

// sameExceptField compares two objects member by member, in order, with
// compacted values, apart from one member whose values are given instead.
func sameExceptField(t testing.TB, what string, direct, through []byte, key, wantDirect, wantThrough string) {
	t.Helper()
	a, b := objectFields(t, direct), objectFields(t, through)
	if len(a) != len(b) {
		t.Errorf("%s: %d members directly, %d through the trunk:\ndirect:  %s\nthrough: %s", what, len(a), len(b), compact(t, direct), compact(t, through))
		return
	}
	for i := range a {
		if a[i].key != b[i].key {
			t.Errorf("%s: member %d is %q directly but %q through the trunk", what, i, a[i].key, b[i].key)
			continue
		}
		if a[i].key == key {
			if got := string(a[i].value); got != mustJSON(wantDirect) {
				t.Errorf("%s: direct %s = %s, want %q", what, key, got, wantDirect)
			}
			if got := string(b[i].value); got != mustJSON(wantThrough) {
				t.Errorf("%s: %s through the trunk = %s, want %q", what, key, got, wantThrough)
			}
			continue
		}
		if x, y := compact(t, a[i].value), compact(t, b[i].value); x != y {
			t.Errorf("%s: member %q differs:\ndirect:  %s\nthrough: %s", what, a[i].key, x, y)
		}
	}
}

// ---- JSON normalisation for comparisons ----

// unnamespace walks a decoded JSON value and strips mcptrunk://<server>/
// from every "uri" member, counting the members it rewrote. It fails the
// test on a "uri" member that is not in the namespaced form (the trunk must
// rewrite every URI a result carries).
func unnamespace(t testing.TB, v any, server string, rewritten *int) any {
	t.Helper()
	prefix := "mcptrunk://" + server + "/"
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "uri") {
				if !strings.HasPrefix(s, prefix) {
					t.Errorf("a uri in a result through the trunk is not namespaced: %q", s)
					continue
				}
				x[k] = strings.TrimPrefix(s, prefix)
				*rewritten++
				continue
			}
			x[k] = unnamespace(t, val, server, rewritten)
		}
		return x
	case []any:
		for i := range x {
			x[i] = unnamespace(t, x[i], server, rewritten)
		}
		return x
	}
	return v
}

// decode turns any value into generic JSON (via its encoding).
func decode(t testing.TB, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(mustJSON(v)), &out); err != nil {
		t.Fatalf("decoding %s: %v", mustJSON(v), err)
	}
	return out
}
