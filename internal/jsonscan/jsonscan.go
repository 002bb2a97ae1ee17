// Package jsonscan is a small validating JSON scanner over raw bytes: it
// finds where values and strings end without decoding them. The trunk uses
// it on its hot paths (a message's envelope, a tool call's name) where
// encoding/json would decode far more than is needed. It accepts only valid
// JSON (RFC 8259, as encoding/json reads it) and answers -1 rather than
// guess; callers fall back to encoding/json then.
package jsonscan

import (
	"encoding/binary"
	"unicode/utf8"
)

// MaxDepth bounds the scanner's recursion; deeper values are left to
// encoding/json (whose own limit is 10,000).
const MaxDepth = 200

// SkipSpace returns the offset of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// SkipValue returns the offset just past the JSON value starting at b[i],
// or -1 when there is none or it is invalid or nested deeper than MaxDepth.
func SkipValue(b []byte, i int) int { return skipValue(b, i, 1) }

func skipValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		end, _ := ScanString(b, i)
		return end
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return -1
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				if i, _ = ScanString(b, i); i < 0 {
					return -1
				}
				if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = SkipSpace(b, i+1)
			}
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			if i = SkipSpace(b, i); i >= len(b) {
				return -1
			}
			if b[i] == closer {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = SkipSpace(b, i+1)
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

// ScanString returns the end of the string starting at b[i] (just past its
// closing quote), or -1 if it is invalid, and whether it is plain: without
// escapes and all ASCII, so that its bytes are what it decodes to.
func ScanString(b []byte, i int) (end int, plain bool) {
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
