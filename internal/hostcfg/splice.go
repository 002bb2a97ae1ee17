package hostcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// span is where one member of an object is, as offsets into the file.
type span struct {
	key                  string
	keyStart             int // the key's opening quote
	valueStart, valueEnd int
}

// memberSpans finds the members of the object at p[start:end], p being
// plain JSON (comments blanked, so offsets are the original file's too).
func memberSpans(p []byte, start, end int) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(p[start:end]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object")
	}
	var out []span
	for dec.More() {
		from := start + int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		s := span{key: tok.(string), valueEnd: start + int(dec.InputOffset())}
		s.keyStart = skipSpace(p, from, ',')
		s.valueStart = s.valueEnd - len(v)
		out = append(out, s)
	}
	return out, nil
}

// skipSpace returns the offset of the first byte from i that is neither
// whitespace nor one of also.
func skipSpace(p []byte, i int, also ...byte) int {
	for i < len(p) && (isSpace(p[i]) || bytes.IndexByte(also, p[i]) >= 0) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// topObject returns the span of the file's top-level object.
func topObject(p []byte) (int, int, error) {
	start := skipSpace(p, 0)
	end := len(bytes.TrimRight(p, " \t\r\n"))
	if start >= end || p[start] != '{' || p[end-1] != '}' {
		return 0, 0, fmt.Errorf("want a JSON object")
	}
	return start, end, nil
}

// layout is how a file is indented, to write new members alike.
type layout struct {
	unit   string // one level of indentation
	pretty bool   // one member per line
}

func layoutOf(p []byte) layout {
	l := layout{unit: "  "}
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '\n' {
			l.pretty = true
			j := i + 1
			for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
				j++
			}
			if j > i+1 && j < len(p) && !isSpace(p[j]) {
				l.unit = string(p[i+1 : j])
				return l
			}
		}
	}
	return l
}

// lineIndent is the leading whitespace of the line that holds p[pos].
func lineIndent(p []byte, pos int) string {
	start := bytes.LastIndexByte(p[:pos], '\n') + 1
	end := start
	for end < pos && (p[end] == ' ' || p[end] == '\t') {
		end++
	}
	return string(p[start:end])
}

// rawMember is a member to write: its key and its value's bytes.
type rawMember struct {
	key   string
	value []byte
	// encoded: value is compact JSON that may be re-indented; otherwise
	// it is a host's bytes, written as they were.
	encoded bool
}

// formatMember writes one member at an indentation.
func (l layout) formatMember(m rawMember, indent string) []byte {
	key, _ := json.Marshal(m.key)
	var b bytes.Buffer
	b.WriteString(indent)
	b.Write(key)
	b.WriteByte(':')
	if l.pretty {
		b.WriteByte(' ')
	}
	if m.encoded && l.pretty {
		_ = json.Indent(&b, m.value, indent, l.unit) // m.value is valid JSON
	} else {
		b.Write(m.value)
	}
	return b.Bytes()
}

// formatObject writes an object of members whose key sits on a line
// indented by indent.
func (l layout) formatObject(ms []rawMember, indent string) []byte {
	if len(ms) == 0 {
		return []byte("{}")
	}
	if !l.pretty {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, m := range ms {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(l.formatMember(m, ""))
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range ms {
		b.Write(l.formatMember(m, indent+l.unit))
		if i < len(ms)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + "}")
	return b.Bytes()
}

// appendMembers adds members at the end of the object at p[start:end]
// (orig's bytes at the same offsets), after its last member: every byte
// of the object before stays, a trailing comma after it too.
func appendMembers(orig, p []byte, start, end int, ms []rawMember) ([]byte, error) {
	spans, err := memberSpans(p, start, end)
	if err != nil {
		return nil, err
	}
	l := layoutOf(p)
	var add bytes.Buffer
	at := start + 1 // after "{"
	if len(spans) > 0 {
		last := spans[len(spans)-1]
		at = last.valueEnd
		indent := lineIndent(p, last.keyStart)
		first := spans[0].keyStart
		l.pretty = bytes.IndexByte(p[start:first], '\n') >= 0
		for _, m := range ms {
			add.WriteByte(',')
			if l.pretty {
				add.WriteByte('\n')
			}
			add.Write(l.formatMember(m, indent))
		}
	} else {
		indent := lineIndent(p, start)
		obj := l.formatObject(ms, indent)
		add.Write(obj[1 : len(obj)-1]) // between the braces kept
		if l.pretty {
			// The closing brace then follows formatObject's last line.
			return splice(orig, start, end, obj), nil
		}
	}
	return splice(orig, at, at, add.Bytes()), nil
}

// splice returns data with data[from:to] replaced by with.
func splice(data []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(with))
	out = append(out, data[:from]...)
	out = append(out, with...)
	return append(out, data[to:]...)
}

// topMembers finds the top-level members of p, plain JSON, and where its
// object starts and ends.
func topMembers(p []byte) (members []span, start, end int, err error) {
	if start, end, err = topObject(p); err != nil {
		return nil, 0, 0, err
	}
	members, err = memberSpans(p, start, end)
	return members, start, end, err
}

// objectMember is the top-level member key of p whose value is an object.
func objectMember(p []byte, key string) (span, bool, error) {
	members, _, _, err := topMembers(p)
	if err != nil {
		return span{}, false, err
	}
	for _, s := range members {
		if s.key == key && p[s.valueStart] == '{' {
			return s, true, nil
		}
	}
	return span{}, false, nil
}

// setMember sets the top-level member key of a file (orig, with p its
// plain JSON) to the bytes value returns for the indentation of the key's
// line, or removes it when value is nil, keeping every other byte.
func setMember(orig, p []byte, key string, value func(indent string) []byte) ([]byte, error) {
	spans, start, end, err := topMembers(p)
	if err != nil {
		return nil, err
	}
	for i, s := range spans {
		if s.key != key {
			continue
		}
		if value != nil {
			return splice(orig, s.valueStart, s.valueEnd, value(lineIndent(p, s.keyStart))), nil
		}
		switch {
		case i > 0: // from the end of the member before
			return splice(orig, spans[i-1].valueEnd, s.valueEnd, nil), nil
		case len(spans) > 1: // up to the next member
			return splice(orig, s.keyStart, spans[1].keyStart, nil), nil
		default: // the only member: keep the braces
			return splice(orig, start+1, end-1, nil), nil
		}
	}
	if value == nil {
		return orig, nil
	}
	indent := layoutOf(p).unit
	if len(spans) > 0 {
		indent = lineIndent(p, spans[len(spans)-1].keyStart)
	}
	return appendMembers(orig, p, start, end, []rawMember{{key: key, value: value(indent)}})
}
