package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"args", "args", 0},
		{"arg", "args", 1}, {"lazzy", "lazy", 1}, {"dissabled", "disabled", 1},
		{"ab", "ba", 1}, {"serach", "search", 1}, {"kitten", "sitting", 3}, {"天气", "天氣", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"args", "command", "disabled", "env", "lazy", "toolSearch", "tools"}
	for _, c := range []struct{ word, want string }{
		{"arg", "args"},
		{"dissabled", "disabled"},
		{"lazzy", "lazy"},
		{"toolsearch", "toolSearch"},
		{"tool", "tools"},
		{"comand", "command"},
		{"globalShortcut", ""}, // not a typo of anything
		{"xyz", ""},
		{"args", ""}, // itself is no suggestion
	} {
		if got := Closest(c.word, keys); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	tools := []string{"mcp__notes__delete", "mcp__notes__search", "mcp__weather__search"}
	for _, c := range []struct{ word, want string }{
		{"mcp__notes__serach", "mcp__notes__search"},
		{"mcp__notse__search", "mcp__notes__search"},
		{"mcp__notes__find", ""},
		{"mcp__notes__remove", ""},
	} {
		if got := Closest(c.word, tools); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}
