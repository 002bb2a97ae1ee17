package config

import (
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	a := Spec{Name: "a", Command: "a"}
	b := Spec{Name: "b", Command: "b"}
	b2 := Spec{Name: "b", Command: "b", Args: []string{"--new"}}
	c := Spec{Name: "c", Command: "c"}
	bad := Spec{Name: "no/slashes", Command: "x"}
	remove, add := Diff([]Spec{a, b, bad}, []Spec{a, b2, c, bad})
	names := func(specs []Spec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Name+" "+s.Command+" "+slices.Concat(s.Args, []string{""})[0])
		}
		slices.Sort(out)
		return out
	}
	if got := names(remove); !slices.Equal(got, []string{"b b "}) {
		t.Errorf("removed %q, want only the changed b as it was", got)
	}
	if got := names(add); !slices.Equal(got, []string{"b b --new", "c c "}) {
		t.Errorf("added %q, want the changed b as it is and the new c", got)
	}
}
