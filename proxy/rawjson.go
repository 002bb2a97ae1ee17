package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// replaceField returns obj, a JSON object, with the value of its top-level
// key replaced by value (already encoded JSON). Everything else keeps its
// exact bytes and order: this is how names and URIs are rewritten without
// touching schemas, annotations, _meta or fields the trunk does not know.
// A missing key is added at the end. If the key appears more than once,
// every occurrence is replaced, so no reader (first-wins or last-wins) can
// see an old value.
func replaceField(obj json.RawMessage, key string, value []byte) (json.RawMessage, error) {
	spans, closing, err := fieldSpans(obj, key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(obj)+len(value)+len(key)+4)
	if len(spans) > 0 {
		prev := 0
		for _, s := range spans {
			out = append(out, obj[prev:s[0]]...)
			out = append(out, value...)
			prev = s[1]
		}
		return append(out, obj[prev:]...), nil
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
	return append(out, obj[closing:]...), nil
}

// fieldSpan finds the byte range of a top-level key's value in obj. When
// the key appears more than once, it is the last occurrence, the one
// encoding/json (and upstream.itemKey) reads.
func fieldSpan(obj json.RawMessage, key string) (start, end int, found bool, err error) {
	spans, _, err := fieldSpans(obj, key)
	if err != nil || len(spans) == 0 {
		return 0, 0, false, err
	}
	last := spans[len(spans)-1]
	return last[0], last[1], true, nil
}

// fieldSpans finds the byte ranges of every value of a top-level key in obj,
// in order, and the offset of obj's closing brace. obj must be exactly one
// JSON object, with nothing but whitespace around it.
func fieldSpans(obj json.RawMessage, key string) (spans [][2]int, closing int, err error) {
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

// stringField reads a top-level string field of obj ("" when absent).
func stringField(obj json.RawMessage, key string) (string, error) {
	start, end, found, err := fieldSpan(obj, key)
	if err != nil || !found {
		return "", err
	}
	var s string
	if err := json.Unmarshal(obj[start:end], &s); err != nil {
		return "", fmt.Errorf("field %q: %w", key, err)
	}
	return s, nil
}

// replaceString sets a top-level string field.
func replaceString(obj json.RawMessage, key, value string) (json.RawMessage, error) {
	enc, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	return replaceField(obj, key, enc)
}
