package naming

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// ServerID validates a configured server name and returns the identifier
// used in exported names and URIs.
//
// Exported names are mcp__<id>__<item>, and hosts accept only
// [A-Za-z0-9_-] in tool names, so the id is the name spelt in those
// characters, by one rule:
//   - a letter with accents or a ligature becomes its ASCII letters
//     ("météo" -> "meteo", "straße" -> "strasse", "Ærø" -> "AEro");
//   - every run of other characters (spaces, dots, slashes) becomes one
//     '_' ("brave search" -> "brave_search", "a . b" -> "a_b"), and one at
//     either end is dropped ("notes!" -> "notes");
//   - ASCII letters, digits, '_' and '-' stay as they are.
//
// The id must split back out of the exported name unambiguously, so a name
// that contains "__" or ends in '_' as typed is refused, as is "trunk" in
// any letter case (the proxy's own tools). A letter with no ASCII spelling
// (天气, погода) is refused too, with a name to use instead: mcptrunk does
// not guess a transliteration. Two names with one id are refused by the
// config (naming both), so each id maps back to one configured name.
// Every error message names the server and says what to do.
func ServerID(name string) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("server %q: name may not be empty", name)
	case strings.Contains(name, Separator):
		return "", fmt.Errorf("server %q: name may not contain %q: exported names are split there (mcp__<server>__<tool>); use %q", name, Separator, suggestFor(name))
	case strings.EqualFold(name, TrunkServer):
		return "", fmt.Errorf("server %q: name %q is reserved for the proxy's own tools (mcp__trunk__status); use another, such as %q", name, TrunkServer, name+"-server")
	case strings.HasSuffix(name, "_"):
		return "", fmt.Errorf("server %q: name may not end in '_': exported names are split at %q (mcp__<server>__<tool>); use %q", name, Separator, suggestFor(name))
	}
	id, unspellable := foldID(name)
	if len(unspellable) > 0 {
		return "", fmt.Errorf("server %q: a server's name is part of every tool name it exports (mcp__<server>__<tool>), where hosts accept only A-Z, a-z, 0-9, '_' and '-', and %s no spelling in those; rename the entry, for instance to %q",
			name, describeRunes(unspellable), suggestFor(name))
	}
	if strings.EqualFold(id, TrunkServer) {
		return "", fmt.Errorf("server %q: its tool-name spelling %q is reserved for the proxy's own tools (mcp__trunk__status); use another name, such as %q", name, id, id+"-server")
	}
	if err := checkID(id); err != nil {
		return "", fmt.Errorf("server %q: its tool-name spelling %q %v; use a name with letters or digits", name, id, err)
	}
	return id, nil
}

// foldID spells name in [A-Za-z0-9_-] by ServerID's rule; unspellable are
// the letters and digits that have no ASCII spelling (left out of id).
func foldID(name string) (id string, unspellable []rune) {
	var b strings.Builder
	pending := false // a run of other characters waits to become one '_'
	emit := func(s string) {
		if pending && b.Len() > 0 && !strings.HasSuffix(b.String(), "_") && !strings.HasPrefix(s, "_") {
			b.WriteByte('_')
		}
		pending = false
		b.WriteString(s)
	}
	for _, r := range name {
		switch {
		case r < 0x80 && legalByte(byte(r)):
			emit(string(r))
		case asciiSpelling(r) != "":
			emit(asciiSpelling(r))
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			unspellable = append(unspellable, r)
			pending = true
		case unicode.Is(unicode.Mn, r):
			// a combining accent on its own: as if on the letter before
		default:
			pending = true
		}
	}
	return b.String(), unspellable
}

// ligatures are letters whose ASCII spelling decomposition does not give.
var ligatures = map[rune]string{
	'ß': "ss", 'ẞ': "SS", 'æ': "ae", 'Æ': "AE", 'œ': "oe", 'Œ': "OE", 'ø': "o", 'Ø': "O",
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ð': "d", 'Ð': "D", 'þ': "th", 'Þ': "Th", 'ı': "i", 'ħ': "h", 'Ħ': "H",
}

// asciiSpelling is r in ASCII letters or digits: its compatibility
// decomposition without the combining marks ("é" -> "e", "ﬁ" -> "fi",
// "²" -> "2"), or a ligature's letters; "" when it has none.
func asciiSpelling(r rune) string {
	if s, ok := ligatures[r]; ok {
		return s
	}
	var b strings.Builder
	for _, d := range norm.NFKD.String(string(r)) {
		switch {
		case unicode.Is(unicode.Mn, d):
		case d < 0x80 && (legalByte(byte(d))) && d != '_' && d != '-':
			b.WriteRune(d)
		default:
			return ""
		}
	}
	return b.String()
}

// suggestFor is a name that ServerID accepts, made from name: its
// spelling, Cyrillic and Greek transliterated ("погода" -> "pogoda"), any
// other letter without one written as its code point ("天气" ->
// "u5929_u6c14"), "__" and a trailing '_' taken out.
func suggestFor(name string) string {
	var b strings.Builder
	for _, r := range name {
		if (unicode.IsLetter(r) || unicode.IsNumber(r)) && r >= 0x80 && asciiSpelling(r) == "" {
			if t, ok := transliterate(r); ok {
				b.WriteString(t)
			} else {
				fmt.Fprintf(&b, " u%04x ", r)
			}
		} else {
			b.WriteRune(r)
		}
	}
	s := b.String()
	for strings.Contains(s, Separator) {
		s = strings.ReplaceAll(s, Separator, "_")
	}
	id, _ := foldID(strings.TrimRight(s, "_ "))
	id = strings.Trim(id, "_")
	if id == "" || strings.EqualFold(id, TrunkServer) {
		id = "server"
	}
	return id
}

// describeRunes quotes the first few letters without an ASCII spelling.
func describeRunes(rs []rune) string {
	var q []string
	for i, r := range rs {
		if i == 3 {
			q = append(q, "...")
			break
		}
		q = append(q, fmt.Sprintf("%q", string(r)))
	}
	if len(rs) == 1 {
		return q[0] + " has"
	}
	return strings.Join(q, ", ") + " have"
}

// checkID reports why id cannot serve as the server part of an exported
// name, or nil if it can. It does not apply the "trunk" reservation, so the
// proxy itself can use TrunkServer.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("is empty")
	case !isLegal(id):
		return fmt.Errorf("contains characters outside [A-Za-z0-9_-]")
	case strings.Contains(id, Separator):
		return fmt.Errorf("contains %q", Separator)
	case strings.HasSuffix(id, "_"):
		return fmt.Errorf("ends with '_'")
	}
	return nil
}

// ServerNameForURL derives a server name from a URL's host ("mcp.example.com"
// -> "mcp_example_com") that ServerID accepts; "remote" when the
// host gives nothing usable (config.Parse then reports the URL itself).
func ServerNameForURL(rawURL string) string {
	const fallback = "remote"
	u, err := url.Parse(rawURL)
	if err != nil {
		return fallback
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(Sanitize(u.Hostname()), func(r rune) bool { return r == '_' }) {
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(part)
	}
	name := b.String()
	if _, err := ServerID(name); err != nil {
		return fallback
	}
	return name
}
