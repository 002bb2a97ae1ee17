package logkey

import (
	"strings"
	"unicode/utf8"
)

// MaxValue bounds a value of untrusted input in a log record or a message
// (Clip): room for any name or id a well-behaved peer sends.
const MaxValue = 200

// Clip is a value that came from outside the trunk (a token's header
// field, a method name, id or client name a host sent, a name or text a
// server sent) fit for one attribute of a log record or one line of a
// message: control characters become spaces, and past MaxValue bytes it
// is cut on a rune boundary and marked "…", so that no one can make a
// record as large as what they sent.
func Clip(s string) string { return ClipTo(s, MaxValue) }

// ClipTo is Clip with a bound of n bytes, the marker not counted.
func ClipTo(s string, n int) string {
	cut := len(s)
	if cut > n {
		cut = max(n, 0)
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	out := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s[:cut])
	if cut < len(s) {
		out += "…"
	}
	return out
}
