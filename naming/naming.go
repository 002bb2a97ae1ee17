package naming

import (
	"fmt"
	"strings"
)

const (
	// Prefix starts every exported tool and prompt name. It marks names the
	// proxy owns, so routing can reject anything else without a lookup.
	Prefix = "mcp__"

	// Separator sits between the server id and the item. Server ids may not
	// contain it, which is what makes splitting unambiguous.
	Separator = "__"

	// TrunkServer is the server id reserved for the proxy's own tools, so a
	// configured upstream can never shadow them.
	TrunkServer = "trunk"

	// DefaultMaxLength is the length budget for exported names when the
	// caller gives none; 64 is the limit common MCP hosts enforce.
	DefaultMaxLength = 64

	// URIScheme is the scheme of namespaced resource URIs.
	URIScheme = "mcptrunk"

	// MinItemRoom is the fewest characters Assign needs for the item part:
	// one character of the original name plus "_" and an 8-character hash,
	// so that even a shortened item stays non-empty and distinguishable.
	MinItemRoom = 10
)

// hashLen is the number of hex digits of the disambiguating hash suffix.
const hashLen = 8

// legalByte reports whether c may appear in an exported name. Hosts commonly
// accept only this set in tool names, so it is the lowest common denominator.
func legalByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isLegal reports whether s is non-empty and uses only [A-Za-z0-9_-].
func isLegal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !legalByte(s[i]) {
			return false
		}
	}
	return true
}

// Sanitize replaces every character outside [A-Za-z0-9_-] with '_'. It works
// per rune, so a multi-byte rune (or an invalid UTF-8 byte) becomes a single
// '_' and the result length tracks what a reader sees, not the byte count.
func Sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && legalByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Name builds Prefix + server + Separator + Sanitize(raw). server is assumed
// to be a ServerID result. Name applies no length budget and does no
// disambiguation; exported names should come from Assign, Name is for
// places that need the plain form (messages, lookups of legal names).
func Name(server, raw string) string {
	return Default.Name(server, raw)
}

// Scheme is a form of exported names: Prefix + server + Separator + item.
// The default, "mcp__", is what hosts and the seeds expect; a host that
// adds its own mcp__<key>__ in front of every tool is better served by a
// shorter prefix, or none (trunk.prefix).
type Scheme struct {
	Prefix string
}

// Default is the scheme with Prefix.
var Default = Scheme{Prefix: Prefix}

// CheckPrefix validates a configured prefix: only [A-Za-z0-9_-], possibly
// empty.
func CheckPrefix(prefix string) error {
	if Sanitize(prefix) != prefix {
		return fmt.Errorf("prefix %q: only letters, digits, '_' and '-' are allowed", prefix)
	}
	return nil
}

// Name is the package-level Name in scheme s.
func (s Scheme) Name(server, raw string) string {
	return s.Prefix + server + Separator + Sanitize(raw)
}

// Split is SplitMCPName in scheme s.
func (s Scheme) Split(name string) (server, item string, ok bool) {
	rest, found := strings.CutPrefix(name, s.Prefix)
	if !found {
		return "", "", false
	}
	server, item, found = strings.Cut(rest, Separator)
	if !found || server == "" || item == "" {
		return "", "", false
	}
	return server, item, true
}

// SplitMCPName returns the server and item part of an exported name: for
// "mcp__files__read_file" it returns ("files", "read_file", true).
//
// It splits at the first Separator after Prefix. Server ids contain no "__"
// and do not end with '_', so that is always the real boundary, and the item
// part may itself contain "__". ok is false when the prefix is missing, the
// server part is empty, or the item part is empty.
func SplitMCPName(name string) (server, item string, ok bool) {
	return Default.Split(name)
}
