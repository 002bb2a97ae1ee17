package logkey

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kid-1", "kid-1"},
		{" a\nb\tc\x7f", " a b c "},
		{strings.Repeat("x", MaxValue), strings.Repeat("x", MaxValue)},
		{strings.Repeat("x", MaxValue+1), strings.Repeat("x", MaxValue) + "…"},
		// A cut inside a rune backs up to its start: the result is UTF-8.
		{strings.Repeat("x", MaxValue-1) + "é", strings.Repeat("x", MaxValue-1) + "…"},
	} {
		if got := Clip(c.in); got != c.want {
			t.Errorf("Clip(%.20q...) = %.20q... (%d bytes), want %d bytes", c.in, got, len(got), len(c.want))
		}
	}
	huge := Clip(strings.Repeat("ü\n", 100_000))
	if len(huge) > MaxValue+len("…") || !utf8.ValidString(huge) || strings.Contains(huge, "\n") {
		t.Errorf("Clip of 300 KB: %d bytes, valid UTF-8 %v", len(huge), utf8.ValidString(huge))
	}
	if got := ClipTo("abcdef", 3); got != "abc…" {
		t.Errorf("ClipTo(abcdef, 3) = %q", got)
	}
}
