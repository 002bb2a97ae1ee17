package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// h8 is the documented hash suffix, computed independently of the code
// under test: the first 8 hex digits of sha256(raw).
func h8(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])[:8]
}

// h8salt is the documented collision fallback for level >= 2.
func h8salt(raw string, level int) string {
	return h8(fmt.Sprintf("%s\x00%d", raw, level))
}

// checkAssign verifies the guarantees every Assign result must meet, for
// any input: coverage, shape, budget, alphabet, routability, injectivity,
// and that legal in-budget names are exported unchanged.
func checkAssign(t *testing.T, server string, raws []string, maxLen int, got map[string]string) {
	t.Helper()
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	base := Prefix + server + Separator
	uniq := map[string]bool{}
	for _, r := range raws {
		uniq[r] = true
	}
	if len(got) != len(uniq) {
		t.Errorf("Assign returned %d names for %d distinct raw names", len(got), len(uniq))
	}
	owner := map[string]string{}
	for raw := range uniq {
		name, ok := got[raw]
		if !ok {
			t.Errorf("no name for raw %q", raw)
			continue
		}
		if !strings.HasPrefix(name, base) {
			t.Errorf("name %q for %q lacks %q", name, raw, base)
		}
		if !isLegal(name) {
			t.Errorf("name %q for %q has illegal characters", name, raw)
		}
		if len(name) > maxLen {
			t.Errorf("name %q for %q is %d characters, budget %d", name, raw, len(name), maxLen)
		}
		s, item, ok := SplitMCPName(name)
		if !ok || s != server || item != strings.TrimPrefix(name, base) {
			t.Errorf("SplitMCPName(%q) = (%q, %q, %v), want (%q, %q, true)", name, s, item, ok, server, strings.TrimPrefix(name, base))
		}
		if prev, dup := owner[name]; dup {
			t.Errorf("raw names %q and %q share exported name %q", prev, raw, name)
		}
		owner[name] = raw
		if isLegal(raw) && len(base)+len(raw) <= maxLen && name != base+raw {
			t.Errorf("legal in-budget raw %q exported as %q, want %q", raw, name, base+raw)
		}
	}
}

func TestAssign(t *testing.T) {
	long53 := strings.Repeat("a", 53)
	long54 := strings.Repeat("b", 54)
	long55 := strings.Repeat("c", 55)
	tests := []struct {
		name   string
		server string
		raws   []string
		maxLen int
		want   map[string]string
	}{
		{
			name:   "legal names unchanged",
			server: "files",
			raws:   []string{"read_file", "write_file", "Del-Ete"},
			want: map[string]string{
				"read_file":  "mcp__files__read_file",
				"write_file": "mcp__files__write_file",
				"Del-Ete":    "mcp__files__Del-Ete",
			},
		},
		{
			name:   "lone lossy name gets plain sanitized form",
			server: "s",
			raws:   []string{"web search", "a.b.c"},
			want: map[string]string{
				"web search": "mcp__s__web_search",
				"a.b.c":      "mcp__s__a_b_c",
			},
		},
		{
			name:   "double underscore inside item",
			server: "s",
			raws:   []string{"a__b", "__x", "y__"},
			want: map[string]string{
				"a__b": "mcp__s__a__b",
				"__x":  "mcp__s____x",
				"y__":  "mcp__s__y__",
			},
		},
		{
			name:   "a.b / a_b / a b: legal keeps plain, lossy hashed",
			server: "s",
			raws:   []string{"a.b", "a_b", "a b"},
			want: map[string]string{
				"a_b": "mcp__s__a_b",
				"a.b": "mcp__s__a_b_" + h8("a.b"),
				"a b": "mcp__s__a_b_" + h8("a b"),
			},
		},
		{
			name:   "no legal member: all hashed",
			server: "s",
			raws:   []string{"a.b", "a b"},
			want: map[string]string{
				"a.b": "mcp__s__a_b_" + h8("a.b"),
				"a b": "mcp__s__a_b_" + h8("a b"),
			},
		},
		{
			name:   "unicode",
			server: "s",
			raws:   []string{"\u65e5\u672c", "caf\u00e9", "cafe", "caf_", "\U0001F600"},
			want: map[string]string{
				"\u65e5\u672c": "mcp__s____",
				"caf\u00e9":    "mcp__s__caf__" + h8("caf\u00e9"), // collides with legal "caf_"
				"cafe":         "mcp__s__cafe",
				"caf_":         "mcp__s__caf_",
				"\U0001F600":   "mcp__s___",
			},
		},
		{
			name:   "empty raw name gets a hash so the item is non-empty",
			server: "s",
			raws:   []string{""},
			want:   map[string]string{"": "mcp__s___" + h8("")},
		},
		{
			name:   "duplicates collapse",
			server: "s",
			raws:   []string{"x", "x", "x.y", "x.y"},
			want:   map[string]string{"x": "mcp__s__x", "x.y": "mcp__s__x_y"},
		},
		{
			name:   "trunk server may be used by the proxy itself",
			server: "trunk",
			raws:   []string{"status"},
			want:   map[string]string{"status": "mcp__trunk__status"},
		},
		{
			name:   "exported length 63, 64 kept; 65 cut to exactly 64",
			server: "srv", // base "mcp__srv__" is 10 characters
			raws:   []string{long53, long54, long55},
			maxLen: 64,
			want: map[string]string{
				long53: "mcp__srv__" + long53,
				long54: "mcp__srv__" + long54,
				long55: "mcp__srv__" + long55[:45] + "_" + h8(long55),
			},
		},
		{
			name:   "maxLen 0 means 64",
			server: "srv",
			raws:   []string{long54, long55},
			maxLen: 0,
			want: map[string]string{
				long54: "mcp__srv__" + long54,
				long55: "mcp__srv__" + long55[:45] + "_" + h8(long55),
			},
		},
		{
			name:   "negative maxLen means 64",
			server: "srv",
			raws:   []string{long55},
			maxLen: -1,
			want:   map[string]string{long55: "mcp__srv__" + long55[:45] + "_" + h8(long55)},
		},
		{
			name:   "custom budget 63: 53-char item fits, 54 is cut",
			server: "srv",
			raws:   []string{long53, long54},
			maxLen: 63,
			want: map[string]string{
				long53: "mcp__srv__" + long53,
				long54: "mcp__srv__" + long54[:44] + "_" + h8(long54),
			},
		},
		{
			name:   "custom budget 65: 55-char item fits",
			server: "srv",
			raws:   []string{long55},
			maxLen: 65,
			want:   map[string]string{long55: "mcp__srv__" + long55},
		},
		{
			name:   "long lossy name is cut after sanitizing",
			server: "srv",
			raws:   []string{strings.Repeat("\u00e9", 60)},
			want:   map[string]string{strings.Repeat("\u00e9", 60): "mcp__srv__" + strings.Repeat("_", 45) + "_" + h8(strings.Repeat("\u00e9", 60))},
		},
		{
			name:   "lossy name that would need a hash near the budget is cut to fit",
			server: "srv",
			raws:   []string{strings.Repeat("d", 50) + ".x", strings.Repeat("d", 50) + " x"},
			want: map[string]string{
				strings.Repeat("d", 50) + ".x": "mcp__srv__" + strings.Repeat("d", 45) + "_" + h8(strings.Repeat("d", 50)+".x"),
				strings.Repeat("d", 50) + " x": "mcp__srv__" + strings.Repeat("d", 45) + "_" + h8(strings.Repeat("d", 50)+" x"),
			},
		},
		{
			name:   "minimum room: one character survives the cut",
			server: "srv",
			raws:   []string{"abcdefghij", "abcdefghijk"}, // room is exactly 10
			maxLen: 20,
			want: map[string]string{
				"abcdefghij":  "mcp__srv__abcdefghij",
				"abcdefghijk": "mcp__srv__a_" + h8("abcdefghijk"),
			},
		},
		{
			name:   "no raw names",
			server: "s",
			raws:   nil,
			want:   map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Assign(tt.server, tt.raws, tt.maxLen)
			if err != nil {
				t.Fatalf("Assign: %v", err)
			}
			if !maps.Equal(got, tt.want) {
				for _, r := range slices.Sorted(maps.Keys(tt.want)) {
					if got[r] != tt.want[r] {
						t.Errorf("raw %q: got %q, want %q", r, got[r], tt.want[r])
					}
				}
				if len(got) != len(tt.want) {
					t.Errorf("got %d names, want %d: %v", len(got), len(tt.want), got)
				}
			}
			checkAssign(t, tt.server, tt.raws, tt.maxLen, got)
			// Shortened names are exactly the budget.
			budget := tt.maxLen
			if budget <= 0 {
				budget = DefaultMaxLength
			}
			for raw, name := range got {
				if len(Name(tt.server, raw)) > budget && len(name) != budget {
					t.Errorf("shortened name %q for %q is %d characters, want exactly %d", name, raw, len(name), budget)
				}
			}
		})
	}
}

func TestAssignErrors(t *testing.T) {
	tests := []struct {
		name     string
		server   string
		maxLen   int
		contains []string
	}{
		{"empty server", "", 64, []string{`server ""`}},
		{"server with __", "a__b", 64, []string{`server "a__b"`}},
		{"server ending in _", "a_", 64, []string{`server "a_"`}},
		{"server with illegal char", "a.b", 64, []string{`server "a.b"`}},
		// base "mcp__" + 50 + "__" = 57 characters, leaving 7 in a 64 budget.
		{"room 7", strings.Repeat("s", 50), 64, []string{`server "` + strings.Repeat("s", 50) + `"`, "64"}},
		// base is 55, leaving 9: one short of MinItemRoom.
		{"room 9", strings.Repeat("s", 48), 0, []string{`server "` + strings.Repeat("s", 48) + `"`, "64", "9"}},
		{"room 9 custom budget", "srv", 19, []string{`server "srv"`, "19"}},
		{"base over budget", "srv", 5, []string{`server "srv"`, "5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Assign(tt.server, []string{"x"}, tt.maxLen)
			if err == nil {
				t.Fatalf("Assign(%q, _, %d) = %v, want error", tt.server, tt.maxLen, got)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
		})
	}
	// Exactly MinItemRoom is enough.
	for _, c := range []struct {
		server string
		maxLen int
	}{{strings.Repeat("s", 47), 64}, {"srv", 20}} {
		raws := []string{"x", strings.Repeat("y", 30), "a.b", "a b"}
		got, err := Assign(c.server, raws, c.maxLen)
		if err != nil {
			t.Fatalf("Assign(%q, _, %d) with room 10: %v", c.server, c.maxLen, err)
		}
		checkAssign(t, c.server, raws, c.maxLen, got)
	}
}

// mixedRaws is a set of raw names that exercises every rule at once.
func mixedRaws() []string {
	return []string{
		"read_file", "a.b", "a_b", "a b", "a:b", "x.y", "x y",
		"", "\u65e5\u672c", "\u65e5\u6587", "caf\u00e9", "caf_", "a__b", "a._b",
		strings.Repeat("L", 100), strings.Repeat("L", 99) + ".", strings.Repeat("L", 99) + " ",
		strings.Repeat("m", 54), strings.Repeat("m", 55), strings.Repeat("m", 56),
		"a_b_" + h8("a.b"),                               // legal name equal to a.b's hashed form
		"x y_" + h8("x.y"),                               // lossy name whose plain form equals x.y's hashed form
		"k   . ..   .....     ", "k     ..   ..   .    ", // same sanitized form, same h8
	}
}

func TestAssignOrderIndependent(t *testing.T) {
	raws := mixedRaws()
	want, err := Assign("srv", raws, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkAssign(t, "srv", raws, 0, want)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		shuffled := slices.Clone(raws)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		// Duplicates must not matter either.
		shuffled = append(shuffled, shuffled[:i%len(shuffled)]...)
		got, err := Assign("srv", shuffled, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("shuffle %d: result depends on order:\n got %v\nwant %v", i, got, want)
		}
	}
}

func TestAssignLegalNamesStable(t *testing.T) {
	legal := []string{"read_file", "a_b", "x_y", "caf_", strings.Repeat("m", 54), "a_b_" + h8("a.b"), "z__z"}
	before, err := Assign("srv", legal, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Add names designed to compete for the legal names' exported forms.
	more := append(slices.Clone(legal), mixedRaws()...)
	more = append(more, "read.file", "read file", "z..z", "z. z", "caf\u00e9", "a.b", "a b")
	for i := range 50 {
		more = append(more, fmt.Sprintf("read_file_%08x", i), fmt.Sprintf("a.b%d", i))
	}
	after, err := Assign("srv", more, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkAssign(t, "srv", more, 0, after)
	for _, r := range legal {
		if before[r] != after[r] {
			t.Errorf("legal raw %q changed from %q to %q when names were added", r, before[r], after[r])
		}
	}
}

func TestAssign100CharNames(t *testing.T) {
	var raws []string
	common := strings.Repeat("p", 90)
	for i := range 300 {
		raws = append(raws, fmt.Sprintf("%s%010d", common, i))
		raws = append(raws, fmt.Sprintf("%s.%09d", common, i))
	}
	for _, server := range []string{"s", "files", strings.Repeat("w", 47)} {
		got, err := Assign(server, raws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkAssign(t, server, raws, 0, got)
		// Route every exported name back through a reverse table built from
		// the split item, as the proxy does.
		route := map[string]string{}
		for raw, name := range got {
			if len(raw) != 100 {
				t.Fatalf("test raw %q is not 100 characters", raw)
			}
			if len(name) != DefaultMaxLength {
				t.Errorf("name %q for a 100-character raw name is %d characters, want %d", name, len(name), DefaultMaxLength)
			}
			s, item, ok := SplitMCPName(name)
			if !ok || s != server {
				t.Fatalf("SplitMCPName(%q) = (%q, %q, %v)", name, s, item, ok)
			}
			if prev, dup := route[item]; dup {
				t.Fatalf("item %q routes to both %q and %q", item, prev, raw)
			}
			route[item] = raw
		}
		if len(route) != len(raws) {
			t.Errorf("%d routable items for %d raw names", len(route), len(raws))
		}
	}
}

// TestAssignCollisionResolution constructs the collisions that hashing alone
// cannot prevent and checks that they are resolved deterministically.
func TestAssignCollisionResolution(t *testing.T) {
	t.Run("hashed name equals a raw legal name", func(t *testing.T) {
		squatter := "a_b_" + h8("a.b")
		raws := []string{"a.b", "a_b", squatter}
		got, err := Assign("s", raws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkAssign(t, "s", raws, 0, got)
		want := map[string]string{
			"a_b":    "mcp__s__a_b",
			squatter: "mcp__s__" + squatter,
			"a.b":    "mcp__s__a_b_" + h8salt("a.b", 2),
		}
		if !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("lone lossy name equals another's hashed name", func(t *testing.T) {
		lossy := "x y_" + h8("x.y") // sanitizes to x.y's hashed item
		raws := []string{"x.y", "x_y", lossy}
		got, err := Assign("s", raws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkAssign(t, "s", raws, 0, got)
		want := map[string]string{
			"x_y": "mcp__s__x_y",
			"x.y": "mcp__s__x_y_" + h8salt("x.y", 2),
			lossy: "mcp__s__x_y_" + h8("x.y") + "_" + h8(lossy),
		}
		if !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	// These two raw names sanitize to the same item and share the first 8
	// hex digits of their sha256 (found by a birthday search).
	r1, r2 := "k   . ..   .....     ", "k     ..   ..   .    "
	if Sanitize(r1) != Sanitize(r2) || h8(r1) != h8(r2) || r1 == r2 {
		t.Fatalf("test pair is not a collision: %q %q %s %s", r1, r2, h8(r1), h8(r2))
	}
	t.Run("real 8-digit hash collision", func(t *testing.T) {
		raws := []string{r1, r2}
		got, err := Assign("s", raws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkAssign(t, "s", raws, 0, got)
		clean := Sanitize(r1)
		want := map[string]string{
			r1: "mcp__s__" + clean + "_" + h8salt(r1, 2),
			r2: "mcp__s__" + clean + "_" + h8salt(r2, 2),
		}
		if !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("hash collision after shortening", func(t *testing.T) {
		// A long server leaves room 10, so both are cut to "k_"+hash.
		server := strings.Repeat("s", 47)
		raws := []string{r1, r2, "k_" + h8salt(r1, 2)} // and a squatter on r1's second choice
		got, err := Assign(server, raws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkAssign(t, server, raws, 0, got)
		base := Prefix + server + Separator
		want := map[string]string{
			r1:                   base + "k_" + h8salt(r1, 3),
			r2:                   base + "k_" + h8salt(r2, 2),
			"k_" + h8salt(r1, 2): base + "k_" + h8salt(r1, 2),
		}
		if !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}
