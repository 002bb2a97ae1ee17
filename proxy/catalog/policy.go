package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// policy is what the config says about exporting: the name scheme and
// budget, and the trunk-wide switches. Per-server filters and read-only
// lists come from each server's Spec.
type Policy struct {
	Scheme        naming.Scheme
	MaxLen        int
	ReadOnly      bool
	ResourceTools bool
	ToolSearch    bool
	CodeMode      bool // trunk.codeMode.enabled: the run_code and code_api tools
	MaxMessage    int  // trunk.maxMessageBytes: bounds each list page
}

func PolicyOf(o config.TrunkOptions) Policy {
	return Policy{
		Scheme:        naming.Scheme{Prefix: o.Prefix},
		MaxLen:        o.MaxNameLength,
		ReadOnly:      o.ReadOnly,
		ResourceTools: o.ResourceTools,
		ToolSearch:    o.ToolSearch,
		CodeMode:      o.CodeMode.Enabled,
		MaxMessage:    o.MaxMessageBytes,
	}
}

// tools applies a server's tool filter, its overrides and read-only list,
// and the trunk's read-only mode, to its tools: what comes out is
// exported, with the annotations the host should act on. names are the
// new names of renamed tools, by upstream name (overrideTools).
func (p Policy) tools(spec config.Spec, items []upstream.Item) (_ []upstream.Item, names map[string]string, warn []string) {
	items = filterItems(spec.Tools, items)
	items, names, warn = overrideTools(spec.Name, spec.Overrides, items)
	out := make([]upstream.Item, 0, len(items))
	for _, it := range items {
		readOnly := readOnlyHint(it.Raw)
		if !readOnly && slices.Contains(spec.ReadOnlyTools, it.Key) {
			if raw, err := markReadOnly(it.Raw); err == nil {
				it.Raw, readOnly = raw, true
			}
		}
		if p.ReadOnly && !readOnly {
			continue
		}
		out = append(out, it)
	}
	return out, names, warn
}

// filterItems keeps the items a filter allows (matched against the name of
// a prompt, the URI of a resource or the URI template of a template).
func filterItems(f config.Filter, items []upstream.Item) []upstream.Item {
	if len(f.Allow) == 0 && len(f.Deny) == 0 {
		return items
	}
	out := make([]upstream.Item, 0, len(items))
	for _, it := range items {
		if f.Allows(it.Key) {
			out = append(out, it)
		}
	}
	return out
}

// readOnlyHint reads annotations.readOnlyHint of a tool.
func readOnlyHint(tool json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(tool, "annotations")
	if err != nil || !found {
		return false
	}
	s, e, found, err := rawjson.FieldSpan(tool[start:end], "readOnlyHint")
	return err == nil && found && string(tool[start:end][s:e]) == "true"
}

// markReadOnly sets annotations.readOnlyHint to true, keeping every other
// annotation: readOnlyTools is stricter than the server, never looser.
func markReadOnly(tool json.RawMessage) (json.RawMessage, error) {
	start, end, found, err := rawjson.FieldSpan(tool, "annotations")
	if err != nil {
		return nil, err
	}
	ann := json.RawMessage(`{}`)
	if found && string(tool[start:end]) != "null" {
		ann = tool[start:end]
	}
	ann, err = rawjson.ReplaceField(ann, "readOnlyHint", []byte("true"))
	if err != nil {
		return nil, err
	}
	return rawjson.ReplaceField(tool, "annotations", ann)
}

// unmatchedPatterns lists a server's filter patterns (and readOnlyTools
// entries) that match none of its items: usually a typo, and silent
// otherwise.
func unmatchedPatterns(server string, spec config.Spec, items upstream.Catalog) []string {
	var out []string
	check := func(field string, patterns []string, lists ...[]upstream.Item) {
		for _, pat := range patterns {
			if !anyMatches(pat, lists...) {
				out = append(out, fmt.Sprintf("server %q: %s pattern %q matches nothing", server, field, pat))
			}
		}
	}
	check("tools.allow", spec.Tools.Allow, items.Tools)
	check("tools.deny", spec.Tools.Deny, items.Tools)
	check("prompts.allow", spec.Prompts.Allow, items.Prompts)
	check("prompts.deny", spec.Prompts.Deny, items.Prompts)
	check("resources.allow", spec.Resources.Allow, items.Resources, items.Templates)
	check("resources.deny", spec.Resources.Deny, items.Resources, items.Templates)
	for _, name := range spec.ReadOnlyTools {
		if !slices.ContainsFunc(items.Tools, func(it upstream.Item) bool { return it.Key == name }) {
			out = append(out, fmt.Sprintf("server %q: readOnlyTools names %q, which the server does not have", server, name))
		}
	}
	return out
}

func anyMatches(pattern string, lists ...[]upstream.Item) bool {
	f := config.Filter{Allow: []string{pattern}}
	for _, items := range lists {
		for _, it := range items {
			if f.Allows(it.Key) {
				return true
			}
		}
	}
	return false
}

// ResourceAllowed applies a server's resources filter to a URI the host
// asks for. Deny patterns apply to the URI itself. Under an allow list, the
// URI passes when it matches a pattern, or when it can come from a template
// the filter exports: a URI the host expanded does not match the template's
// own pattern, so it is checked against the template's literal start.
func ResourceAllowed(f config.Filter, uri string, templates []upstream.Item) bool {
	for _, p := range f.Deny {
		if (config.Filter{Allow: []string{p}}).Allows(uri) {
			return false
		}
	}
	if len(f.Allow) == 0 || f.Allows(uri) {
		return true
	}
	for _, tpl := range templates {
		literal, _, _ := strings.Cut(tpl.Key, "{")
		if f.Allows(tpl.Key) && literal != "" && strings.HasPrefix(uri, literal) {
			return true
		}
	}
	return false
}
