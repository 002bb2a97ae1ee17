package rawjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// reservedPrefix is internal/protocol.MetaPrefix; rawjson stays a leaf.
const reservedPrefix = "io.modelcontextprotocol/"

// HasReservedMeta is a cheap test for whether obj may carry a reserved _meta
// key: when it reports false, ReplaceReservedMeta(obj, nil) would change
// nothing. It looks at bytes only, so a true may be a false alarm (the
// prefix inside a string).
func HasReservedMeta(obj []byte) bool { return bytes.Contains(obj, []byte(reservedPrefix)) }

// ReplaceReservedMeta returns obj with every reserved key
// ("io.modelcontextprotocol/...") of its _meta member removed and the keys of
// set added (after the others, sorted; values as given, which must be valid
// JSON). The other _meta keys (progressToken, a server's own) keep their
// values byte for byte; the rest of obj keeps its exact bytes. A _meta left
// empty is removed, and an empty or null obj with nothing to set stays as it
// was. This is how a request or result crosses from one hop to the next: the
// reserved keys describe one client and one server, never another pair.
func ReplaceReservedMeta(obj json.RawMessage, set map[string]json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(obj)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		if len(set) == 0 {
			return obj, nil
		}
		obj = json.RawMessage(`{}`)
	}
	// One scan of obj finds _meta for both reading and splicing: obj is
	// every request to a server at the stateless revision.
	var buf [4][2]int
	spans, closing, err := fieldSpans(buf[:0], obj, "_meta")
	if err != nil {
		return nil, err
	}
	var start, end int
	found := len(spans) > 0
	if found {
		start, end = spans[len(spans)-1][0], spans[len(spans)-1][1] // the one decoding reads
	}
	if out, ok, err := replaceReservedFast(obj, start, end, found, set, spans, closing); ok {
		return out, err
	}
	meta := map[string]json.RawMessage{}
	if found {
		if err := json.Unmarshal(obj[start:end], &meta); err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		if meta == nil { // "_meta": null
			meta = map[string]json.RawMessage{}
		}
	}
	dropped := false
	for k := range meta {
		if strings.HasPrefix(k, reservedPrefix) {
			delete(meta, k)
			dropped = true
		}
	}
	if !dropped && len(set) == 0 {
		return obj, nil
	}
	for k, v := range set {
		meta[k] = v
	}
	if len(meta) == 0 {
		return DeleteFields(obj, "_meta")
	}
	encoded, err := marshalSorted(meta)
	if err != nil {
		return nil, err
	}
	return ReplaceField(obj, "_meta", encoded)
}

// replaceReservedFast is ReplaceReservedMeta by scanning, for a _meta the
// scanner vouches for (the usual case, on every request to a server at the
// stateless revision): the members kept keep their bytes and order, the
// keys of set follow, sorted. ok is false when the slow path must decide.
func replaceReservedFast(obj json.RawMessage, start, end int, found bool, set map[string]json.RawMessage, spans [][2]int, closing int) (_ json.RawMessage, ok bool, _ error) {
	var buf [8]member
	members := buf[:0]
	if found {
		if members, ok = scanMembers(obj[start:end], members); !ok {
			return nil, false, nil
		}
	}
	dropped := false
	for _, m := range members {
		if isReservedKey(m.key(obj[start:end])) {
			dropped = true
		}
	}
	if !dropped && len(set) == 0 {
		return obj, true, nil
	}
	var keyBuf [8]string
	keys := keyBuf[:0]
	size := 0
	for k, v := range set {
		if !isReserved(k) {
			return nil, false, nil // not this path's business
		}
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	extra := make([]byte, 0, size)
	for i, k := range keys {
		if i > 0 {
			extra = append(extra, ',')
		}
		var err error
		if extra, err = appendJSONString(extra, k); err != nil {
			return nil, true, err
		}
		extra = append(extra, ':')
		extra = append(extra, bytes.TrimSpace(set[k])...)
	}
	var meta []byte
	kept := 0
	if found {
		meta, kept = joinMembers(obj[start:end], members, func(k []byte) bool { return !isReservedKey(k) }, extra)
	} else {
		meta = append(append([]byte{'{'}, extra...), '}')
	}
	if kept == 0 && len(extra) == 0 {
		out, err := DeleteFields(obj, "_meta")
		return out, true, err
	}
	return spliceField(obj, spans, closing, "_meta", meta), true, nil
}

// marshalSorted encodes a map of raw values with its keys in order, so the
// same input always gives the same bytes.
func marshalSorted(m map[string]json.RawMessage) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONString(b, k); err != nil {
			return nil, err
		}
		b = append(b, ':')
		var compact bytes.Buffer
		if err := json.Compact(&compact, m[k]); err != nil {
			return nil, fmt.Errorf("_meta[%q]: %w", k, err)
		}
		b = append(b, compact.Bytes()...)
	}
	return append(b, '}'), nil
}

// MetaString reads a string value of obj's _meta ("" when absent or not a
// string).
func MetaString(obj json.RawMessage, key string) string {
	raw := MetaValue(obj, key)
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// MetaValue returns the raw value of one key of obj's _meta, or nil: the
// value decoding _meta into a map would give (the key's last occurrence;
// nil when _meta is not a valid object), found by scanning, not decoding.
// A stateless request's _meta carries the client's capabilities, and
// several of its keys are read per request: decoding it whole for each was
// a tenth of a stateless request's CPU.
func MetaValue(obj json.RawMessage, key string) json.RawMessage {
	start, end, found, err := FieldSpan(obj, "_meta")
	if err != nil || !found {
		return nil
	}
	meta := obj[start:end]
	vs, ve, found, err := FieldSpan(meta, key)
	if err != nil || !found {
		return nil
	}
	return meta[vs:ve]
}

// HasField reports whether obj has a top-level member key.
func HasField(obj json.RawMessage, key string) bool {
	_, _, found, err := FieldSpan(obj, key)
	return err == nil && found
}

// DeleteFields returns obj without its top-level members named keys. The
// members kept keep their exact bytes and order; obj is returned as it was
// when it has none of them.
func DeleteFields(obj json.RawMessage, keys ...string) (json.RawMessage, error) {
	present := false
	for _, k := range keys {
		if HasField(obj, k) {
			present = true
		}
	}
	if !present {
		return obj, nil
	}
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	var buf [16]member
	if members, ok := scanMembers(obj, buf[:0]); ok {
		out, _ := joinMembers(obj, members, func(k []byte) bool { return !drop[string(k)] }, nil)
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	out := []byte{'{'}
	kept := 0
	for dec.More() {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if drop[tok.(string)] {
			continue
		}
		member := bytes.TrimLeft(obj[from:dec.InputOffset()], " \t\r\n,")
		if kept > 0 {
			out = append(out, ',')
		}
		out = append(out, member...)
		kept++
	}
	return append(out, '}'), nil
}
