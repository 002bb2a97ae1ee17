package textview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/wording"
)

// AccessLines say, for mcptrunk check, who sees what: trunk.policy's rules,
// who reads the operators' pages when callers sign in, and each profile
// with its endpoint (path is trunk.http.path). None when the config has
// none of them: everyone sees everything.
func AccessLines(t config.TrunkOptions, path string) []string {
	var out []string
	if n := len(t.Policy.Rules); n > 0 {
		out = append(out, fmt.Sprintf("policy: %s, deciding what each caller sees (deny first; nothing allowed is denied); callers without an access token have no claims", wording.Count(n, "rule", "rules")))
	}
	switch {
	case t.Policy.Operators != "":
		out = append(out, "operators: the status page, /events and /metrics of serve --http answer the static token and callers matching "+t.Policy.Operators)
	case t.HTTP.Auth != nil:
		out = append(out, "operators: none set: the status page, /events and /metrics of serve --http answer the static token alone (trunk.policy.operators)")
	}
	names := make([]string, 0, len(t.Profiles))
	for name := range t.Profiles {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := t.Profiles[name]
		servers, tools := "every server", "every tool"
		if len(p.Servers) > 0 {
			servers = "servers " + strings.Join(p.Servers, ", ")
		}
		if len(p.Tools) > 0 {
			tools = "tools " + strings.Join(p.Tools, ", ")
		}
		out = append(out, fmt.Sprintf("profile %s: %s; %s; at %s/p/%s and serve --profile %s", name, servers, tools, path, name, name))
	}
	return out
}
