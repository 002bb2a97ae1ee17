package catalog

import (
	"fmt"
	"slices"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/suggest"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// DidYouMean is ` (did you mean "x"?)` naming the exported tool or prompt
// closest to name, or "" when none is close: a typo in a call gets the
// name it meant.
func (c *Catalog) DidYouMean(kind, name string) string {
	routes := c.Tools
	switch kind {
	case "tool":
	case "prompt":
		routes = c.Prompts
	default:
		return ""
	}
	var names []string
	for _, m := range routes {
		for n := range m {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if m := suggest.Closest(name, names); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

// NotExported says why a ready server's tool or prompt called name is not
// in the catalog: the config's filter or trunk.readOnly when one of them
// withholds an item the server has (never a filter the config does not
// set), else that the server has no such item, with the closest name.
func (c *Catalog) NotExported(srv *upstream.Client, readOnly bool, kind, name string) string {
	item := name
	if !c.Unprefixed(srv.Name()) {
		_, item, _ = c.Scheme.Split(name)
	}
	spec, cat := srv.Spec(), srv.Catalog()
	filter, items, field := spec.Tools, cat.Tools, "tools"
	if kind == "prompt" {
		filter, items, field = spec.Prompts, cat.Prompts, "prompts"
	}
	for _, it := range items {
		if it.Key != item && naming.Sanitize(it.Key) != item {
			continue
		}
		switch {
		case !filter.Allows(it.Key):
			return fmt.Sprintf("unknown %s %q: server %q has it, and its %q filter in the config leaves it out", kind, name, srv.Name(), field)
		case renamedIn(spec.Overrides, kind, it.Key) && c.exportedAs(kind, srv.Name(), it.Key) != "":
			return fmt.Sprintf("unknown %s %q: server %q has it, and its overrides in the config rename it %q", kind, name, srv.Name(), c.exportedAs(kind, srv.Name(), it.Key))
		case kind == "tool" && readOnly:
			return fmt.Sprintf("unknown %s %q: server %q has it, and trunk.readOnly leaves it out: it is not marked read-only (readOnlyTools in the server's config marks it)", kind, name, srv.Name())
		}
	}
	return fmt.Sprintf("unknown %s %q: server %q exports no such %s%s", kind, name, srv.Name(), kind, c.DidYouMean(kind, name))
}

// renamedIn reports whether the overrides rename a tool or prompt.
func renamedIn(o config.Overrides, kind, raw string) bool {
	if kind == "prompt" {
		return o.Prompts[raw].Name != ""
	}
	return o.Tools[raw].Name != ""
}

// exportedAs is the name a server's tool or prompt is exported under, or
// "".
func (c *Catalog) exportedAs(kind, server, raw string) string {
	routes := c.Tools
	if kind == "prompt" {
		routes = c.Prompts
	}
	for exported, r := range routes[server] {
		if r == raw {
			return exported
		}
	}
	return ""
}
