package main

// Comparing catalogs and results: compacted, canonical, with the trunk's
// namespaced URIs mapped.

import (
	"encoding/json"
	"strings"
	"testing"
)

func compactAll(t *testing.T, items []json.RawMessage) string {
	t.Helper()
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = compact(t, it)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func duplicates(keys []string) []string {
	seen := map[string]int{}
	var out []string
	for _, k := range keys {
		seen[k]++
		if seen[k] == 2 {
			out = append(out, k)
		}
	}
	return out
}

// withNamespacedURIs returns a tools/call result (list "content") or a
// prompts/get result (list "messages") compacted, member order kept, with
// the URIs the trunk is meant to rewrite in the namespaced form: a
// resource_link's uri and an embedded resource's resource.uri.
func withNamespacedURIs(t *testing.T, raw []byte, server, list string) string {
	t.Helper()
	ns := func(uri string) json.RawMessage { return json.RawMessage(mustJSON("mcptrunk://" + server + "/" + uri)) }
	content := func(item []byte) []byte {
		switch getString(t, item, "type") {
		case "resource_link":
			return setMember(t, item, "uri", ns(getString(t, item, "uri")))
		case "resource":
			res := getField(t, item, "resource")
			return setMember(t, item, "resource", setMember(t, res, "uri", ns(getString(t, res, "uri"))))
		}
		return item
	}
	var items []json.RawMessage
	if err := json.Unmarshal(getField(t, raw, list), &items); err != nil {
		t.Fatalf("%s of %s: %v", list, raw, err)
	}
	parts := make([]string, len(items))
	for i, it := range items {
		if list == "messages" {
			it = setMember(t, it, "content", content(getField(t, it, "content")))
		} else {
			it = content(it)
		}
		parts[i] = compact(t, it)
	}
	return compact(t, setMember(t, raw, list, json.RawMessage("["+strings.Join(parts, ",")+"]")))
}

// setMember returns obj compacted, member order kept, with key's value
// replaced.
func setMember(t *testing.T, obj []byte, key string, value json.RawMessage) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteByte('{')
	found := false
	for i, f := range objectFields(t, obj) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(mustJSON(f.key))
		b.WriteByte(':')
		if f.key == key {
			f.value, found = value, true
		}
		b.WriteString(compact(t, f.value))
	}
	b.WriteByte('}')
	if !found {
		t.Fatalf("%s has no member %q", obj, key)
	}
	return []byte(b.String())
}

// canonical decodes and re-encodes JSON, for comparing values whose member
// order a re-encoding client (the SDK) does not keep.
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return mustJSON(v)
}
