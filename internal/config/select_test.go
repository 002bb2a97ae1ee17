package config

import (
	"strings"
	"testing"
)

// Select takes a server by its config name or its identifier, once however
// often named, in the order named; nothing named is every server; an
// unknown name is an error that lists the config's names.
func TestSelect(t *testing.T) {
	specs := []Spec{{Name: "Zeta"}, {Name: "my server"}, {Name: "alpha"}}
	names := func(specs []Spec) string {
		var n []string
		for _, s := range specs {
			n = append(n, s.Name)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Zeta,my server,alpha"},
		{[]string{"alpha", "Zeta"}, "alpha,Zeta"},
		{[]string{"my_server", "my server", "alpha"}, "my server,alpha"},
	} {
		got, err := Select(specs, c.args)
		if err != nil || names(got) != c.want {
			t.Errorf("Select(%q) = %s, %v; want %s", c.args, names(got), err, c.want)
		}
	}
	_, err := Select(specs, []string{"alpha", "beta"})
	if err == nil || err.Error() != `unknown server "beta" (the config has: Zeta, alpha, my server)` {
		t.Errorf("Select of an unknown name: %v", err)
	}
}

// ByServerID keys each spec by the identifier a host sees and leaves out a
// name that makes none.
func TestByServerID(t *testing.T) {
	got := ByServerID([]Spec{{Name: "my server"}, {Name: "alpha"}, {Name: ""}})
	if len(got) != 2 || got["my_server"].Name != "my server" || got["alpha"].Name != "alpha" {
		t.Errorf("ByServerID = %v; want my_server and alpha only", got)
	}
}
