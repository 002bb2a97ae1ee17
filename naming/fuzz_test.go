package naming

import (
	"strings"
	"testing"
)

// FuzzNameSplit checks that for any valid server id and any raw names,
// Assign produces names that split back to the server and their item, stay
// within budget, use only legal characters, are distinct, and do not depend
// on input order.
func FuzzNameSplit(f *testing.F) {
	f.Add("files", "read_file", "write_file", 0)
	f.Add("brave search", "web.search", "web_search", 64)
	f.Add("s", "", "_", 20)
	f.Add("srv", strings.Repeat("x", 100), strings.Repeat("x", 99)+".", 0)
	f.Add("my.srv", "a__b", "a._b", 65)
	f.Add("x", "\u65e5\u672c\u8a9e", "\xff\xfe", 63)
	f.Add(strings.Repeat("s", 47), "k   . ..   .....     ", "k     ..   ..   .    ", 0)
	f.Add("_a", "_", "__", 15)
	f.Fuzz(func(t *testing.T, name, raw, other string, maxLen int) {
		server, err := ServerID(name)
		if err != nil {
			return
		}
		if maxLen > 1000 || maxLen < -1000 {
			maxLen %= 1000
		}
		budget := maxLen
		if budget <= 0 {
			budget = DefaultMaxLength
		}
		raws := []string{raw, other}
		got, err := Assign(server, raws, maxLen)
		room := budget - len(Prefix+server+Separator)
		if room < MinItemRoom {
			if err == nil {
				t.Fatalf("Assign(%q, _, %d) with room %d succeeded", server, maxLen, room)
			}
			if !strings.Contains(err.Error(), server) {
				t.Fatalf("error %q does not name server %q", err, server)
			}
			return
		}
		if err != nil {
			t.Fatalf("Assign(%q, %q, %d): %v", server, raws, maxLen, err)
		}
		checkAssign(t, server, raws, maxLen, got)
		for _, r := range raws {
			s, item, ok := SplitMCPName(got[r])
			if !ok || s != server || Prefix+s+Separator+item != got[r] {
				t.Fatalf("SplitMCPName(%q) = (%q, %q, %v)", got[r], s, item, ok)
			}
		}
		rev, err := Assign(server, []string{other, raw}, maxLen)
		if err != nil {
			t.Fatal(err)
		}
		if rev[raw] != got[raw] || rev[other] != got[other] {
			t.Fatalf("order dependence: %v vs %v", got, rev)
		}
	})
}

// FuzzResourceURI checks that SplitResourceURI inverts ResourceURI for any
// valid server id and any non-empty upstream URI.
func FuzzResourceURI(f *testing.F) {
	f.Add("srv", "demo://r/{id}")
	f.Add("files", "file:///tmp/x")
	f.Add("w", "https://example.com/a?b=c#d")
	f.Add("s", "/")
	f.Add("brave search", "mcptrunk://other/x")
	f.Add("x", "\u65e5\u672c \xff")
	f.Fuzz(func(t *testing.T, name, uri string) {
		server, err := ServerID(name)
		if err != nil || uri == "" {
			return
		}
		u := ResourceURI(server, uri)
		s, got, ok := SplitResourceURI(u)
		if !ok || s != server || got != uri {
			t.Fatalf("SplitResourceURI(%q) = (%q, %q, %v), want (%q, %q, true)", u, s, got, ok, server, uri)
		}
	})
}
