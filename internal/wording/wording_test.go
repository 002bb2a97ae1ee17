package wording

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 templates", 1: "1 template", 2: "2 templates", -1: "-1 templates"} {
		if got := Count(n, "template", "templates"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
