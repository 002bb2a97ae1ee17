package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tUint
	tDouble
	tString
	tBytes
	tPunct // an operator or delimiter; text holds it
)

type token struct {
	kind tokKind
	text string // the identifier or operator; the decoded value of a string
	pos  int    // byte offset in the source
	u    uint64
	f    float64
}

// reserved are words CEL keeps for itself: none may name a variable.
var reserved = map[string]bool{
	"as": true, "break": true, "const": true, "continue": true, "else": true, "for": true,
	"function": true, "if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// puncts are CEL's operators and delimiters, longest first.
var puncts = []string{
	"==", "!=", "<=", ">=", "&&", "||",
	"<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}",
}

func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		start := i
		switch {
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			t, n, err := lexNumber(src[i:])
			if err != nil {
				return nil, syntaxErr(start, err.Error())
			}
			t.pos = start
			toks = append(toks, t)
			i += n
		case c == '"' || c == '\'':
			s, n, err := lexString(src[i:], false, false)
			if err != nil {
				return nil, syntaxErr(start, err.Error())
			}
			toks = append(toks, token{kind: tString, text: s, pos: start})
			i += n
		case isIdentStart(c):
			j := i
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '"' || src[j] == '\'') {
				raw, byt := false, false
				switch strings.ToLower(word) {
				case "r":
					raw = true
				case "b":
					byt = true
				case "br":
					raw, byt = true, true
				}
				if raw || byt {
					s, n, err := lexString(src[j:], raw, byt)
					if err != nil {
						return nil, syntaxErr(start, err.Error())
					}
					kind := tString
					if byt {
						kind = tBytes
					}
					toks = append(toks, token{kind: kind, text: s, pos: start})
					i = j + n
					continue
				}
			}
			if reserved[word] {
				return nil, syntaxErr(start, fmt.Sprintf("reserved identifier: %s", word))
			}
			toks = append(toks, token{kind: tIdent, text: word, pos: start})
			i = j
		default:
			p := ""
			for _, cand := range puncts {
				if strings.HasPrefix(src[i:], cand) {
					p = cand
					break
				}
			}
			if p == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, syntaxErr(start, fmt.Sprintf("token recognition error at: '%c'", r))
			}
			toks = append(toks, token{kind: tPunct, text: p, pos: start})
			i += len(p)
		}
	}
	return append(toks, token{kind: tEOF, pos: len(src)}), nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isHex(c byte) bool        { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// lexNumber reads an int (decimal or 0x hex), a uint (with a u suffix) or
// a double (with a fraction or an exponent) at the start of s.
func lexNumber(s string) (token, int, error) {
	i := 0
	if strings.HasPrefix(s, "0x") {
		i = 2
		for i < len(s) && isHex(s[i]) {
			i++
		}
		if i == 2 {
			return token{}, 0, fmt.Errorf("malformed hex literal")
		}
		return intToken(s[:i], s[2:i], 16, s, i)
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	isDouble := false
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		isDouble = true
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			isDouble = true
			i = j
		}
	}
	if isDouble {
		f, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return token{}, 0, fmt.Errorf("invalid double literal %s", s[:i])
		}
		return token{kind: tDouble, f: f}, i, nil
	}
	return intToken(s[:i], s[:i], 10, s, i)
}

func intToken(lit, digits string, base int, s string, i int) (token, int, error) {
	if i < len(s) && (s[i] == 'u' || s[i] == 'U') {
		u, err := strconv.ParseUint(digits, base, 64)
		if err != nil {
			return token{}, 0, fmt.Errorf("invalid uint literal %s", lit)
		}
		return token{kind: tUint, u: u}, i + 1, nil
	}
	// The magnitude is kept as a uint so that -9223372036854775808 reads.
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return token{}, 0, fmt.Errorf("invalid int literal %s", lit)
	}
	return token{kind: tInt, u: u, text: lit}, i, nil
}

// lexString reads a quoted literal at the start of s: '...', "...",
// ”'...”' or """...""", raw (no escapes) or not, as text or as bytes
// (escapes then give bytes rather than code points). The result of a
// bytes literal is its bytes in a Go string.
func lexString(s string, raw, byt bool) (string, int, error) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	i := len(q)
	var b strings.Builder
	for {
		if i >= len(s) {
			return "", 0, fmt.Errorf("unterminated string")
		}
		if strings.HasPrefix(s[i:], q) {
			return b.String(), i + len(q), nil
		}
		c := s[i]
		if len(q) == 1 && (c == '\n' || c == '\r') {
			return "", 0, fmt.Errorf("newline in a string")
		}
		if c != '\\' || raw {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", 0, fmt.Errorf("invalid UTF-8 in a string")
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		n, err := unescape(s[i:], byt, &b)
		if err != nil {
			return "", 0, err
		}
		i += n
	}
}

// unescape decodes the escape at the start of s (which begins with a
// backslash) into b, and says how many bytes it took.
func unescape(s string, byt bool, b *strings.Builder) (int, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("unterminated escape")
	}
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
		'\\': '\\', '\'': '\'', '"': '"', '`': '`', '?': '?'}
	if c, ok := simple[s[1]]; ok {
		b.WriteByte(c)
		return 2, nil
	}
	var digits, base, maxLen = 0, 16, 0
	switch s[1] {
	case 'x', 'X':
		digits, maxLen = 2, 0xff
	case 'u':
		digits, maxLen = 4, 0xffff
	case 'U':
		digits, maxLen = 8, 0x10ffff
	case '0', '1', '2', '3':
		digits, base, maxLen = 3, 8, 0xff
	default:
		return 0, fmt.Errorf("invalid escape sequence \\%c", s[1])
	}
	start := 2
	if base == 8 {
		start = 1
	}
	if len(s) < start+digits {
		return 0, fmt.Errorf("invalid escape sequence")
	}
	v, err := strconv.ParseUint(s[start:start+digits], base, 32)
	if err != nil || v > uint64(maxLen) {
		return 0, fmt.Errorf("invalid escape sequence %s", s[:start+digits])
	}
	if (s[1] == 'u' || s[1] == 'U') && byt {
		return 0, fmt.Errorf("unicode escape in a bytes literal")
	}
	switch {
	case byt && maxLen == 0xff:
		b.WriteByte(byte(v))
	case v >= 0xd800 && v < 0xe000:
		return 0, fmt.Errorf("invalid unicode code point in escape")
	default:
		b.WriteRune(rune(v))
	}
	return start + digits, nil
}

// Error is an expression that is refused: where (Line and Column count
// from 1, code points; 0 when it is the whole expression), and why.
type Error struct {
	Line, Column int
	Msg          string
	pos          int // byte offset in the source
}

// Error gives the place as cel-go does: ERROR: <input>:1:9: message.
func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("ERROR: <input>:%d:%d: %s", e.Line, e.Column, e.Msg)
}

// locate sets the error's line and column in src.
func (e *Error) locate(src string) {
	if e.pos < 0 || e.pos > len(src) {
		return
	}
	e.Line, e.Column = 1, 1
	for _, r := range src[:e.pos] {
		if r == '\n' {
			e.Line, e.Column = e.Line+1, 1
		} else {
			e.Column++
		}
	}
}

func syntaxErr(pos int, msg string) error {
	return &Error{pos: pos, Msg: "Syntax error: " + msg}
}
