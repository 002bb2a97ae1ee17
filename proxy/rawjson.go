package proxy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// replaceField returns obj, a JSON object, with the value of its top-level
// key replaced by value (already encoded JSON). Everything else keeps its
// exact bytes and order: this is how names and URIs are rewritten without
// touching schemas, annotations, _meta or fields the trunk does not know.
// A missing key is added at the end. If the key appears more than once,
// every occurrence is replaced, so no reader (first-wins or last-wins) can
// see an old value.
func replaceField(obj json.RawMessage, key string, value []byte) (json.RawMessage, error) {
	var buf [4][2]int
	spans, closing, err := fieldSpans(buf[:0], obj, key)
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

// stringField reads a top-level string field of obj ("" when absent).
func stringField(obj json.RawMessage, key string) (string, error) {
	start, end, found, err := fieldSpan(obj, key)
	if err != nil || !found {
		return "", err
	}
	if s, ok := plainString(obj[start:end]); ok {
		return s, nil
	}
	var s string
	if err := json.Unmarshal(obj[start:end], &s); err != nil {
		return "", fmt.Errorf("field %q: %w", key, err)
	}
	return s, nil
}

// plainString decodes a valid JSON string value that needs no unescaping:
// printable ASCII without a backslash, which decodes to its own bytes.
// Anything else is left to encoding/json.
func plainString(v []byte) (string, bool) {
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

// replaceString sets a top-level string field.
func replaceString(obj json.RawMessage, key, value string) (json.RawMessage, error) {
	var buf [64]byte
	enc, err := appendJSONString(buf[:0], value)
	if err != nil {
		return nil, err
	}
	return replaceField(obj, key, enc)
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
// scanFields and skipValue accept only valid JSON (RFC 8259 grammar, as
// encoding/json reads it), and give up (ok false) rather than guess: on an
// error, on a key they would have to unescape or case-fold, and on nesting
// deeper than maxScanDepth. Giving up is always safe: the caller asks
// encoding/json instead.

// maxScanDepth bounds the scanner's recursion; deeper values are left to
// encoding/json (whose own limit is 10,000).
const maxScanDepth = 200

// scanFields appends the range of every value of key in obj, a JSON object
// alone but for whitespace, and returns the offset of its closing brace.
func scanFields(spans [][2]int, obj []byte, key string) (_ [][2]int, closing int, ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return spans, 0, false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		closing = i
	} else {
		for {
			if i >= len(obj) || obj[i] != '"' {
				return spans, 0, false
			}
			end, plain := scanString(obj, i)
			if end < 0 || !plain {
				return spans, 0, false // an escaped or non-ASCII key: encoding/json decides what it spells
			}
			match := string(obj[i+1:end-1]) == key
			i = skipSpace(obj, end)
			if i >= len(obj) || obj[i] != ':' {
				return spans, 0, false
			}
			i = skipSpace(obj, i+1)
			end = skipValue(obj, i, 1)
			if end < 0 {
				return spans, 0, false
			}
			if match {
				spans = append(spans, [2]int{i, end})
			}
			i = skipSpace(obj, end)
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
			i = skipSpace(obj, i+1)
		}
	}
	if skipSpace(obj, closing+1) != len(obj) {
		return spans, 0, false
	}
	return spans, closing, true
}

// skipSpace returns the offset of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the offset just past the JSON value starting at b[i],
// or -1 when there is none or it is invalid or nested too deeply.
func skipValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		end, _ := scanString(b, i)
		return end
	case c == '{' || c == '[':
		if depth >= maxScanDepth {
			return -1
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				if i, _ = scanString(b, i); i < 0 {
					return -1
				}
				if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipSpace(b, i+1)
			}
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			if i = skipSpace(b, i); i >= len(b) {
				return -1
			}
			if b[i] == closer {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(b, i)
	}
	return -1
}

func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipNumber returns the end of the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// scanString returns the end of the string starting at b[i] (just past its
// closing quote), or -1 if it is invalid, and whether it is plain: without
// escapes and all ASCII, so that its bytes are what it decodes to.
func scanString(b []byte, i int) (end int, plain bool) {
	plain = true
	for i++; i < len(b); i++ {
		// Long text goes 8 bytes at a time while no byte needs a look.
		for i+8 <= len(b) && !needsLook(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if stringSafe[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1, plain
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				return -1, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1, false
				}
				i += 4
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		default: // non-ASCII: kept as is in values; keys with it are left to encoding/json
			plain = false
		}
	}
	return -1, false
}

// needsLook reports whether any of the 8 bytes in w is a control
// character, a quote, a backslash or not ASCII (SWAR: each test sets the
// high bit of a byte that matches, and never of one that does not when
// it reports none).
func needsLook(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (w - ones*0x20) &^ w
	q := w ^ (ones * '"')
	quote := (q - ones) &^ q
	bs := w ^ (ones * '\\')
	backslash := (bs - ones) &^ bs
	return (control|quote|backslash|w)&highs != 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// stringSafe marks the bytes a string scan can pass over: printable ASCII
// other than the quote and the backslash.
var stringSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
