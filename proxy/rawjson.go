package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// replaceField returns obj, a JSON object, with the value of its top-level
// key replaced by value (already encoded JSON). Everything else keeps its
// exact bytes and order: this is how names and URIs are rewritten without
// touching schemas, annotations, _meta or fields the trunk does not know.
// A missing key is added at the end.
func replaceField(obj json.RawMessage, key string, value []byte) (json.RawMessage, error) {
	start, end, found, err := fieldSpan(obj, key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(obj)+len(value)+len(key)+4)
	if found {
		out = append(out, obj[:start]...)
		out = append(out, value...)
		return append(out, obj[end:]...), nil
	}
	closing := bytes.LastIndexByte(obj, '}')
	out = append(out, obj[:closing]...)
	if len(bytes.TrimSpace(obj[1:closing])) > 0 {
		out = append(out, ',')
	}
	enc, _ := json.Marshal(key)
	out = append(out, enc...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, obj[closing:]...), nil
}

// fieldSpan finds the byte range of a top-level key's value in obj.
func fieldSpan(obj json.RawMessage, key string) (start, end int, found bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return 0, 0, false, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return 0, 0, false, fmt.Errorf("expected a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return 0, 0, false, err
		}
		if tok == key {
			end := int(dec.InputOffset())
			return end - len(value), end, true, nil
		}
	}
	return 0, 0, false, nil
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
