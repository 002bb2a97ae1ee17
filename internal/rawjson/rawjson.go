package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/mcptrunk/mcptrunk/internal/jsonscan"
)

// ReplaceField returns obj, a JSON object, with the value of its top-level
// key replaced by value (already encoded JSON). Everything else keeps its
// exact bytes and order: this is how names and URIs are rewritten without
// touching schemas, annotations, _meta or fields the trunk does not know.
// A missing key is added at the end. If the key appears more than once,
// every occurrence is replaced, so no reader (first-wins or last-wins) can
// see an old value.
func ReplaceField(obj json.RawMessage, key string, value []byte) (json.RawMessage, error) {
	var buf [4][2]int
	spans, closing, err := fieldSpans(buf[:0], obj, key)
	if err != nil {
		return nil, err
	}
	return spliceField(obj, spans, closing, key, value), nil
}

// spliceField is ReplaceField once obj has been scanned: spans are every
// value of key and closing is obj's closing brace (fieldSpans).
func spliceField(obj json.RawMessage, spans [][2]int, closing int, key string, value []byte) json.RawMessage {
	out := make([]byte, 0, len(obj)+len(value)+len(key)+4)
	if len(spans) > 0 {
		prev := 0
		for _, s := range spans {
			out = append(out, obj[prev:s[0]]...)
			out = append(out, value...)
			prev = s[1]
		}
		return append(out, obj[prev:]...)
	}
	opening := bytes.IndexByte(obj, '{') // only whitespace precedes it
	out = append(out, obj[:closing]...)
	if len(bytes.TrimSpace(obj[opening+1:closing])) > 0 {
		out = append(out, ',')
	}
	enc, _ := json.Marshal(key)
	out = append(out, enc...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, obj[closing:]...)
}

// FieldSpan finds the byte range of a top-level key's value in obj. When
// the key appears more than once, it is the last occurrence, the one
// encoding/json (and upstream.itemKey) reads.
func FieldSpan(obj json.RawMessage, key string) (start, end int, found bool, err error) {
	var buf [4][2]int
	spans, _, err := fieldSpans(buf[:0], obj, key)
	if err != nil || len(spans) == 0 {
		return 0, 0, false, err
	}
	last := spans[len(spans)-1]
	return last[0], last[1], true, nil
}

// fieldSpans appends to spans the byte ranges of every value of a top-level
// key in obj, in order, and returns them with the offset of obj's closing
// brace. obj must be exactly one JSON object, with nothing but whitespace
// around it.
//
// It runs on every routed request, so it first tries scanFields, which
// validates and walks obj without allocating; whatever scanFields cannot
// vouch for (invalid JSON, escaped or non-ASCII keys, deep nesting) goes to
// decoderFieldSpans, whose answer, error text included, is the reference.
func fieldSpans(spans [][2]int, obj json.RawMessage, key string) ([][2]int, int, error) {
	if found, closing, ok := scanFields(spans, obj, key); ok {
		return found, closing, nil
	}
	found, closing, err := decoderFieldSpans(obj, key)
	if err != nil {
		return nil, 0, err
	}
	return append(spans, found...), closing, nil
}

// decoderFieldSpans is fieldSpans with encoding/json's Decoder: slow (it
// allocates per token), but it is the definition of what fieldSpans answers.
func decoderFieldSpans(obj json.RawMessage, key string) (spans [][2]int, closing int, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, 0, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, 0, fmt.Errorf("expected a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, 0, err
		}
		if tok == key {
			end := int(dec.InputOffset())
			spans = append(spans, [2]int{end - len(value), end})
		}
	}
	// More stops at the closing brace, but also at the end of the input or
	// at a syntax error: only a '}' token completes the object.
	if tok, err = dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, 0, errors.New("expected a complete JSON object")
	}
	closing = int(dec.InputOffset()) - 1
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, errors.New("unexpected data after the JSON object")
	}
	return spans, closing, nil
}

// StringField reads a top-level string field of obj ("" when absent).
func StringField(obj json.RawMessage, key string) (string, error) {
	start, end, found, err := FieldSpan(obj, key)
	if err != nil || !found {
		return "", err
	}
	if s, ok := PlainString(obj[start:end]); ok {
		return s, nil
	}
	var s string
	if err := json.Unmarshal(obj[start:end], &s); err != nil {
		return "", fmt.Errorf("field %q: %w", key, err)
	}
	return s, nil
}

// PlainString decodes a valid JSON string value that needs no unescaping:
// printable ASCII without a backslash, which decodes to its own bytes.
// Anything else is left to encoding/json.
func PlainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

// ReplaceString sets a top-level string field.
func ReplaceString(obj json.RawMessage, key, value string) (json.RawMessage, error) {
	var buf [64]byte
	enc, err := appendJSONString(buf[:0], value)
	if err != nil {
		return nil, err
	}
	return ReplaceField(obj, key, enc)
}

// appendJSONString appends value as json.Marshal encodes it. Names and URIs
// are printable ASCII with nothing to escape in practice, and are quoted
// directly; the rest (control characters, quotes, backslashes, the HTML
// characters json.Marshal escapes, non-ASCII) goes through json.Marshal.
func appendJSONString(b []byte, value string) ([]byte, error) {
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case c < 0x20, c >= utf8.RuneSelf, c == '"', c == '\\', c == '<', c == '>', c == '&':
			enc, err := json.Marshal(value)
			return append(b, enc...), err
		}
	}
	b = append(b, '"')
	b = append(b, value...)
	return append(b, '"'), nil
}

// ---- the allocation-free scanner behind fieldSpans ----
//
// scanFields accepts only valid JSON (RFC 8259 grammar, as encoding/json
// reads it), and gives up (ok false) rather than guess: on an error, on a
// key it would have to unescape or case-fold, and on nesting deeper than
// jsonscan.MaxDepth. Giving up is always safe: the caller asks
// encoding/json instead.

// scanFields appends the range of every value of key in obj, a JSON object
// alone but for whitespace, and returns the offset of its closing brace.
func scanFields(spans [][2]int, obj []byte, key string) (_ [][2]int, closing int, ok bool) {
	i := jsonscan.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return spans, 0, false
	}
	i = jsonscan.SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		closing = i
	} else {
		for {
			if i >= len(obj) || obj[i] != '"' {
				return spans, 0, false
			}
			end, plain := jsonscan.ScanString(obj, i)
			if end < 0 || !plain {
				return spans, 0, false // an escaped or non-ASCII key: encoding/json decides what it spells
			}
			match := string(obj[i+1:end-1]) == key
			i = jsonscan.SkipSpace(obj, end)
			if i >= len(obj) || obj[i] != ':' {
				return spans, 0, false
			}
			i = jsonscan.SkipSpace(obj, i+1)
			end = jsonscan.SkipValue(obj, i)
			if end < 0 {
				return spans, 0, false
			}
			if match {
				spans = append(spans, [2]int{i, end})
			}
			i = jsonscan.SkipSpace(obj, end)
			if i >= len(obj) {
				return spans, 0, false
			}
			if obj[i] == '}' {
				closing = i
				break
			}
			if obj[i] != ',' {
				return spans, 0, false
			}
			i = jsonscan.SkipSpace(obj, i+1)
		}
	}
	if jsonscan.SkipSpace(obj, closing+1) != len(obj) {
		return spans, 0, false
	}
	return spans, closing, true
}
