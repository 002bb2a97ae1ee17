package jsonscan

import (
	"encoding/json"
	"testing"
)

func FuzzNeedsLook(f *testing.F) {
	f.Add(uint64(0x4141414141414141))
	f.Add(uint64(0x4141414122414141))
	f.Add(uint64(0x1f41414141414141))
	f.Add(uint64(0x41414141414141c3))
	f.Add(uint64(0x205c202020202020))
	f.Fuzz(func(t *testing.T, w uint64) {
		want := false
		for i := range 8 {
			c := byte(w >> (8 * i))
			want = want || c < 0x20 || c == '"' || c == '\\' || c >= 0x80
		}
		if got := needsLook(w); got != want {
			t.Fatalf("needsLook(%#016x) = %v, want %v", w, got, want)
		}
	})
}

// FuzzSkipValue: SkipValue accepts exactly what encoding/json calls valid
// (up to MaxDepth) and ends where the value ends.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"x\u00e9"`, `-1.5e+3`, `tru`, `{"a":}`, `[1,]`, "\"\x01\"", `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		i := SkipSpace(b, 0)
		end := SkipValue(b, i)
		valid := json.Valid(b)
		if end >= 0 && SkipSpace(b, end) == len(b) && !valid {
			t.Fatalf("SkipValue accepted invalid JSON %q", s)
		}
		if valid && end < 0 {
			return // nested deeper than MaxDepth: left to encoding/json
		}
		if valid && SkipSpace(b, end) != len(b) {
			t.Fatalf("SkipValue(%q) ended at %d of %d", s, end, len(b))
		}
	})
}
