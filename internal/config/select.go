package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcptrunk/mcptrunk/naming"
)

// Select returns the specs the command line names, each by its config name
// or its identifier (the name a host sees in mcp__<server>__...), once each
// in the order named; every spec when none is named. An unknown name is an
// error that lists the config's names, so a typo is easy to see.
func Select(specs []Spec, names []string) ([]Spec, error) {
	if len(names) == 0 {
		return specs, nil
	}
	var out []Spec
	seen := map[string]bool{}
	for _, name := range names {
		i := slices.IndexFunc(specs, func(s Spec) bool {
			id, _ := naming.ServerID(s.Name)
			return s.Name == name || id == name
		})
		if i < 0 {
			var known []string
			for _, s := range specs {
				known = append(known, s.Name)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("unknown server %q (the config has: %s)", name, strings.Join(known, ", "))
		}
		if !seen[specs[i].Name] {
			seen[specs[i].Name] = true
			out = append(out, specs[i])
		}
	}
	return out, nil
}

// ByServerID indexes specs by server id (naming.ServerID). A spec whose
// name is invalid is left out: the Fleet refuses to start it anyway, with
// an error naming it.
func ByServerID(specs []Spec) map[string]Spec {
	m := make(map[string]Spec, len(specs))
	for _, s := range specs {
		if id, err := naming.ServerID(s.Name); err == nil {
			m[id] = s
		}
	}
	return m
}
