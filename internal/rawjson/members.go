package rawjson

import (
	"encoding/json"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/jsonscan"
)

// member is one top-level member of an object: its text runs from the
// opening quote of its key to the end of its value. Its key is read from
// the object's bytes when asked for (key), not copied into a string: a
// string per member was most of what rewriting a stateless request's
// _meta allocated.
type member struct {
	start, keyEnd, value, end int // keyEnd: just after the key's closing quote; value: where the value starts
}

// key is m's key in obj (a plain string: scanMembers takes no other).
func (m member) key(obj []byte) []byte { return obj[m.start+1 : m.keyEnd-1] }

// scanMembers lists the top-level members of obj, a JSON object alone but
// for whitespace, without allocating more than the list. It gives up (ok
// false) where scanFields does: invalid JSON, keys that need unescaping,
// deep nesting; the caller then asks encoding/json.
func scanMembers(obj []byte, into []member) (_ []member, ok bool) {
	i := jsonscan.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return into, false
	}
	i = jsonscan.SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return into, jsonscan.SkipSpace(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return into, false
		}
		start := i
		end, plain := jsonscan.ScanString(obj, i)
		if end < 0 || !plain {
			return into, false
		}
		keyEnd := end
		i = jsonscan.SkipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return into, false
		}
		i = jsonscan.SkipSpace(obj, i+1)
		if end = jsonscan.SkipValue(obj, i); end < 0 {
			return into, false
		}
		into = append(into, member{start: start, keyEnd: keyEnd, value: i, end: end})
		i = jsonscan.SkipSpace(obj, end)
		if i >= len(obj) {
			return into, false
		}
		if obj[i] == '}' {
			return into, jsonscan.SkipSpace(obj, i+1) == len(obj)
		}
		if obj[i] != ',' {
			return into, false
		}
		i = jsonscan.SkipSpace(obj, i+1)
	}
}

// joinMembers writes an object of obj's members that keep(key) accepts,
// each with its exact bytes, in order, followed by extra (already encoded
// members, "key":value, each). kept counts the members kept.
func joinMembers(obj []byte, members []member, keep func(key []byte) bool, extra []byte) (out []byte, kept int) {
	out = make([]byte, 0, len(obj)+len(extra)+2)
	out = append(out, '{')
	for _, m := range members {
		if !keep(m.key(obj)) {
			continue
		}
		if kept > 0 {
			out = append(out, ',')
		}
		out = append(out, obj[m.start:m.end]...)
		kept++
	}
	if len(extra) > 0 {
		if kept > 0 {
			out = append(out, ',')
		}
		out = append(out, extra...)
	}
	return append(out, '}'), kept
}

func isReserved(key string) bool { return strings.HasPrefix(key, reservedPrefix) }

// isReservedKey is isReserved of a key's bytes, without making a string.
func isReservedKey(key []byte) bool {
	return len(key) >= len(reservedPrefix) && string(key[:len(reservedPrefix)]) == reservedPrefix
}

// Object returns the top-level members of obj as raw values, the last one
// winning for a repeated key (as encoding/json has it). It scans without
// decoding the values, and asks encoding/json only for what the scanner
// does not vouch for.
func Object(obj []byte) (map[string]json.RawMessage, error) {
	var buf [8]member
	if members, ok := scanMembers(obj, buf[:0]); ok {
		out := make(map[string]json.RawMessage, len(members))
		for _, m := range members {
			out[string(m.key(obj))] = json.RawMessage(obj[m.value:m.end])
		}
		return out, nil
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(obj, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// EachMember calls fn with each top-level member of obj, in order, the
// key's bytes and the raw value; a repeated key comes as often as it is
// written, so the last call for a key carries what decoding would keep.
// It scans without allocating, and leaves to encoding/json only what the
// scanner does not vouch for (then once per distinct key, in no order).
// key and value are obj's own bytes or decoding's: fn must not keep key.
func EachMember(obj []byte, fn func(key []byte, value json.RawMessage)) error {
	var buf [8]member
	if members, ok := scanMembers(obj, buf[:0]); ok {
		for _, m := range members {
			fn(m.key(obj), json.RawMessage(obj[m.value:m.end]))
		}
		return nil
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(obj, &out); err != nil {
		return err
	}
	for k, v := range out {
		fn([]byte(k), v)
	}
	return nil
}
