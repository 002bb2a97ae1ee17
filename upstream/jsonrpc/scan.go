package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// scanMessage is the fast path of decodeMessage: one pass over the line that
// validates it as JSON and records where the envelope's members are,
// without allocating and without copying params, result or id out of the
// line (they are slices of it, capped so an append cannot run into the
// bytes after them: the line is never reused, see readLoop).
//
// It must produce exactly what json.Unmarshal into a message would, so it
// gives up (ok false) on anything where encoding/json has its own ideas,
// and decodeMessage then asks encoding/json: keys that are escaped,
// non-ASCII, or equal to a member name but for case (encoding/json matches
// them case-insensitively); a member given twice; a method that is not a
// plain string or null; an error that is not an object or null; nesting
// deeper than maxScanDepth; and any invalid JSON (so that the error, and
// what is logged, stays encoding/json's).
func scanMessage(line []byte) (m message, ok bool) {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return m, false
	}
	var seen [memberCount]bool
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return m, false
			}
			end, plain := scanString(line, i)
			if end < 0 || !plain {
				return m, false
			}
			member := envelopeMember(line[i+1 : end-1])
			if member == memberFolded {
				return m, false
			}
			if i = skipSpace(line, end); i >= len(line) || line[i] != ':' {
				return m, false
			}
			i = skipSpace(line, i+1)
			end = skipValue(line, i, 1)
			if end < 0 {
				return m, false
			}
			if member >= 0 {
				if seen[member] {
					return m, false
				}
				seen[member] = true
				if !m.set(member, line[i:end:end]) {
					return m, false
				}
			}
			if i = skipSpace(line, end); i >= len(line) {
				return m, false
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return m, false
			}
			i = skipSpace(line, i+1)
		}
	}
	if skipSpace(line, i) != len(line) {
		return m, false
	}
	return m, true
}

// The envelope's members, as scanMessage tells them apart.
const (
	memberFolded  = -2 // a member's name in other letter case: encoding/json's call
	memberUnknown = -1
	memberID      = iota - 2
	memberMethod
	memberParams
	memberResult
	memberError
	memberCount
)

var memberNames = [memberCount]string{"id", "method", "params", "result", "error"}

func envelopeMember(key []byte) int {
	for m, name := range memberNames {
		if string(key) == name {
			return m
		}
	}
	for _, name := range memberNames {
		if len(key) == len(name) && bytes.EqualFold(key, []byte(name)) {
			return memberFolded
		}
	}
	return memberUnknown
}

// set stores one member's value as json.Unmarshal would, or reports that
// it cannot be sure to.
func (m *message) set(member int, v []byte) bool {
	switch member {
	case memberID:
		m.ID = v
	case memberParams:
		m.Params = v
	case memberResult:
		m.Result = v
	case memberMethod:
		switch {
		case string(v) == "null": // leaves the method empty
		case v[0] == '"':
			if !isPlain(v) {
				return false
			}
			m.Method = methodName(v[1 : len(v)-1])
		default:
			return false
		}
	case memberError:
		switch {
		case string(v) == "null": // leaves the error nil
		case v[0] == '{':
			e := new(Error)
			if err := json.Unmarshal(v, e); err != nil {
				return false
			}
			m.Error = e
		default:
			return false
		}
	}
	return true
}

// isPlain reports whether v, a valid JSON string, needs no unescaping:
// printable ASCII without a backslash, which decodes to its own bytes.
func isPlain(v []byte) bool {
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// methodName returns the method b spells, without allocating for the
// methods every session repeats.
func methodName(b []byte) string {
	switch string(b) {
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "prompts/get":
		return "prompts/get"
	case "resources/read":
		return "resources/read"
	case "ping":
		return "ping"
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/message":
		return "notifications/message"
	case "notifications/cancelled":
		return "notifications/cancelled"
	}
	return string(b)
}

// ---- a validating JSON scanner: the same as proxy/rawjson.go's ----
//
// skipValue accepts only valid JSON (RFC 8259 grammar, as encoding/json
// reads it) and answers -1 rather than guess: on an error, and on nesting
// deeper than maxScanDepth.

// maxScanDepth bounds the scanner's recursion; deeper values are left to
// encoding/json (whose own limit is 10,000).
const maxScanDepth = 200

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
