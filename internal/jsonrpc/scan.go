package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcptrunk/mcptrunk/internal/jsonscan"
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
// deeper than jsonscan.MaxDepth; and any invalid JSON (so that the error, and
// what is logged, stays encoding/json's).
func scanMessage(line []byte) (m message, ok bool) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return m, false
	}
	var seen [memberCount]bool
	i = jsonscan.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return m, false
			}
			end, plain := jsonscan.ScanString(line, i)
			if end < 0 || !plain {
				return m, false
			}
			member := envelopeMember(line[i+1 : end-1])
			if member == memberFolded {
				return m, false
			}
			if i = jsonscan.SkipSpace(line, end); i >= len(line) || line[i] != ':' {
				return m, false
			}
			i = jsonscan.SkipSpace(line, i+1)
			end = jsonscan.SkipValue(line, i)
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
			if i = jsonscan.SkipSpace(line, end); i >= len(line) {
				return m, false
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return m, false
			}
			i = jsonscan.SkipSpace(line, i+1)
		}
	}
	if jsonscan.SkipSpace(line, i) != len(line) {
		return m, false
	}
	return m, true
}

// The envelope's members, as scanMessage tells them apart.
const (
	memberFolded  = -2 // a member's name in other letter case: encoding/json's call
	memberUnknown = -1
	memberID      = iota - 2
	memberVersion
	memberMethod
	memberParams
	memberResult
	memberError
	memberCount
)

var memberNames = [memberCount]string{"id", "jsonrpc", "method", "params", "result", "error"}

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
	case memberVersion:
		switch {
		case string(v) == `"2.0"`:
			m.JSONRPC = "2.0"
		case string(v) == "null": // leaves it empty
		case v[0] == '"' && isPlain(v):
			m.JSONRPC = string(v[1 : len(v)-1])
		default:
			return false
		}
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
