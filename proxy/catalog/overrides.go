package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/suggest"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// A server's overrides (config.Overrides) reshape its tools as they are
// exported, after pinning has held the server's own definitions against
// the lockfile: an override is config, never drift, and a change of the
// server's under an override is still caught. Each edit splices bytes;
// the rest of a definition, its schema included, stays the server's.

// overrideTools applies the overrides to the tools a server exports.
// names maps the upstream name of each renamed tool to its new name,
// for the namespace; a new name another of the server's tools already
// has is not taken, and warned about.
func overrideTools(server string, o config.Overrides, items []upstream.Item) (out []upstream.Item, names map[string]string, warn []string) {
	return overrideItems(server, "tools", items, func(key string) (string, bool) {
		t, ok := o.Tool(key)
		return t.Name, ok
	}, func(it upstream.Item, name string) (json.RawMessage, error) {
		t, _ := o.Tool(it.Key)
		t.Name = name
		return overrideTool(it.Raw, t)
	})
}

// overridePrompts is overrideTools for prompts.
func overridePrompts(server string, o config.Overrides, items []upstream.Item) (out []upstream.Item, names map[string]string, warn []string) {
	return overrideItems(server, "prompts", items, func(key string) (string, bool) {
		p, ok := o.Prompt(key)
		return p.Name, ok
	}, func(it upstream.Item, name string) (json.RawMessage, error) {
		p, _ := o.Prompt(it.Key)
		p.Name = name
		return overridePrompt(it.Raw, p)
	})
}

// overrideItems applies overrides to the items of one list (field, such
// as "tools"): newName says whether an item has an override and its new
// name, apply rewrites an item under its override (given the new name it
// takes, or ""). An item whose override cannot be applied is exported as
// the server gives it, with a warning.
func overrideItems(server, field string, items []upstream.Item, newName func(key string) (string, bool), apply func(it upstream.Item, name string) (json.RawMessage, error)) (out []upstream.Item, names map[string]string, warn []string) {
	taken := make(map[string]bool, len(items))
	overridden := false
	for _, it := range items {
		n, ok := newName(it.Key)
		overridden = overridden || ok
		if !ok || n == "" {
			taken[it.Key] = true
		}
	}
	if !overridden {
		return items, nil, nil
	}
	out = make([]upstream.Item, 0, len(items))
	for _, it := range items {
		name, ok := newName(it.Key)
		if !ok {
			out = append(out, it)
			continue
		}
		if name != "" && name != it.Key {
			if taken[name] {
				warn = append(warn, fmt.Sprintf("server %q: overrides.%s.%s.name %q is the name of another of its %s, which keeps it; %q keeps its own", server, field, it.Key, name, field, it.Key))
				name = ""
			} else {
				if names == nil {
					names = map[string]string{}
				}
				names[it.Key] = name
			}
		}
		raw, err := apply(it, name)
		if err != nil {
			warn = append(warn, fmt.Sprintf("server %q: overrides.%s.%s not applied: %v", server, field, it.Key, err))
			out = append(out, it)
			continue
		}
		out = append(out, upstream.Item{Key: it.Key, Raw: raw})
	}
	return out, names, warn
}

// renamed adds, for each withheld tool or prompt an override renames, the new name
// with the same reason: the host knows the tool by that name, and a call
// of it is refused saying why. A name that is another tool's own keeps
// that tool's entry.
func (w withheldItems) renamed(o config.Overrides) {
	newName := map[pin.Kind]func(string) string{
		pin.Tools:   func(raw string) string { return o.Tools[raw].Name },
		pin.Prompts: func(raw string) string { return o.Prompts[raw].Name },
	}
	for kind, name := range newName {
		aliases := map[string]string{}
		for raw, why := range w[kind] {
			if n := name(raw); n != "" {
				if _, taken := w[kind][n]; !taken {
					aliases[n] = why
				}
			}
		}
		for n, why := range aliases {
			w.add(kind, n, why)
		}
	}
}

// overrideTool is a tool's definition under its override: the name,
// title and description replaced, the annotations set member by member
// over the tool's own, each default argument's property given a
// "default", and each fixed argument removed from the input schema's
// properties and required list. Everything else keeps its bytes.
func overrideTool(tool json.RawMessage, t config.ToolOverride) (json.RawMessage, error) {
	var err error
	for _, f := range [...]struct{ key, value string }{{"name", t.Name}, {"title", t.Title}, {"description", t.Description}} {
		if f.value == "" {
			continue
		}
		if tool, err = rawjson.ReplaceString(tool, f.key, f.value); err != nil {
			return nil, err
		}
	}
	if len(t.Annotations) > 0 {
		tool, err = editMember(tool, "annotations", func(ann json.RawMessage) (json.RawMessage, error) {
			var err error
			each := rawjson.EachMember(t.Annotations, func(key []byte, value json.RawMessage) {
				if err == nil {
					ann, err = rawjson.ReplaceField(ann, string(key), value)
				}
			})
			return ann, cmp.Or(each, err)
		})
		if err != nil {
			return nil, fmt.Errorf("annotations: %w", err)
		}
	}
	if len(t.Arguments) == 0 || !rawjson.HasField(tool, "inputSchema") {
		return tool, nil // no schema: nothing to show of the arguments
	}
	tool, err = editMember(tool, "inputSchema", func(schema json.RawMessage) (json.RawMessage, error) {
		return overrideSchema(schema, t.Arguments)
	})
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	return tool, nil
}

// overridePrompt is a prompt's definition under its override: the name,
// title and description replaced, and each argument with a default no
// longer required. Everything else keeps its bytes.
func overridePrompt(prompt json.RawMessage, p config.PromptOverride) (json.RawMessage, error) {
	var err error
	for _, f := range [...]struct{ key, value string }{{"name", p.Name}, {"title", p.Title}, {"description", p.Description}} {
		if f.value == "" {
			continue
		}
		if prompt, err = rawjson.ReplaceString(prompt, f.key, f.value); err != nil {
			return nil, err
		}
	}
	if len(p.Arguments) == 0 {
		return prompt, nil
	}
	start, end, found, err := rawjson.FieldSpan(prompt, "arguments")
	if err != nil || !found {
		return prompt, err
	}
	var args []json.RawMessage
	if json.Unmarshal(prompt[start:end], &args) != nil {
		return nil, fmt.Errorf("arguments is not a list")
	}
	changed := false
	for i, a := range args {
		name, err := rawjson.StringField(a, "name")
		if err != nil {
			continue
		}
		if _, ok := p.Arguments[name]; !ok || !rawjson.HasField(a, "required") {
			continue
		}
		if args[i], err = rawjson.ReplaceField(a, "required", []byte("false")); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		changed = true
	}
	if !changed {
		return prompt, nil
	}
	list := []byte{'['}
	for i, a := range args {
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, a...)
	}
	list = append(list, ']')
	return rawjson.ReplaceField(prompt, "arguments", list)
}

// overrideSchema edits an input schema's properties and required list for
// the arguments' defaults and fixed values, in the arguments' name order.
func overrideSchema(schema json.RawMessage, args map[string]config.ArgumentOverride) (json.RawMessage, error) {
	var fixed []string
	if !rawjson.HasField(schema, "properties") { // no property to edit; a fixed one may still be required
		for name, a := range args {
			if len(a.Fixed) > 0 {
				fixed = append(fixed, name)
			}
		}
		return dropRequired(schema, fixed)
	}
	schema, err := editMember(schema, "properties", func(props json.RawMessage) (json.RawMessage, error) {
		for _, name := range slices.Sorted(maps.Keys(args)) {
			a := args[name]
			if len(a.Fixed) > 0 {
				fixed = append(fixed, name)
				var err error
				if props, err = rawjson.DeleteFields(props, name); err != nil {
					return nil, err
				}
				continue
			}
			if !rawjson.HasField(props, name) {
				continue // a property the tool does not have: warned about, not invented
			}
			var err error
			props, err = editMember(props, name, func(prop json.RawMessage) (json.RawMessage, error) {
				return rawjson.ReplaceField(prop, "default", a.Default)
			})
			if err != nil {
				return nil, fmt.Errorf("properties.%s: %w", name, err)
			}
		}
		return props, nil
	})
	if err != nil {
		return schema, err
	}
	return dropRequired(schema, fixed)
}

// dropRequired removes the names fixed from a schema's required list, and
// the list when it empties.
func dropRequired(schema json.RawMessage, fixed []string) (json.RawMessage, error) {
	if len(fixed) == 0 {
		return schema, nil
	}
	start, end, found, err := rawjson.FieldSpan(schema, "required")
	if err != nil || !found {
		return schema, err
	}
	var required []string
	if json.Unmarshal(schema[start:end], &required) != nil {
		return schema, nil // not a list of names: nothing of ours in it
	}
	kept := slices.DeleteFunc(slices.Clone(required), func(n string) bool { return slices.Contains(fixed, n) })
	if len(kept) == len(required) {
		return schema, nil
	}
	if len(kept) == 0 {
		return rawjson.DeleteFields(schema, "required")
	}
	enc, _ := json.Marshal(kept)
	return rawjson.ReplaceField(schema, "required", enc)
}

// editMember replaces obj's member key with edit's answer for its value:
// an object, or {} when the member is missing or null.
func editMember(obj json.RawMessage, key string, edit func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	start, end, found, err := rawjson.FieldSpan(obj, key)
	if err != nil {
		return nil, err
	}
	inner := json.RawMessage(`{}`)
	if found && string(obj[start:end]) != "null" {
		inner = obj[start:end]
	}
	if inner[0] != '{' {
		return nil, fmt.Errorf("%s is not an object", key)
	}
	inner, err = edit(inner)
	if err != nil {
		return nil, err
	}
	return rawjson.ReplaceField(obj, key, inner)
}

// Arguments is a tools/call's or prompts/get's params with an override's
// arguments applied: each fixed value set, each default set where the
// request leaves the argument out. A request that gives a fixed argument
// itself is refused, naming the item as the host knows it (kind and
// exported) and the argument.
func Arguments(kind, exported string, overrides map[string]config.ArgumentOverride, params json.RawMessage) (json.RawMessage, error) {
	if len(overrides) == 0 {
		return params, nil
	}
	args := json.RawMessage(`{}`)
	start, end, found, err := rawjson.FieldSpan(params, "arguments")
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s %q: %v", kind, exported, err)
	}
	if found && string(params[start:end]) != "null" {
		args = params[start:end]
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		a := overrides[name]
		given := rawjson.HasField(args, name)
		switch {
		case len(a.Fixed) > 0 && given:
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s %q: argument %q is fixed by the trunk's configuration and may not be given; call it without %q", kind, exported, name, name)
		case len(a.Fixed) > 0:
			args, err = rawjson.ReplaceField(args, name, a.Fixed)
		case !given:
			args, err = rawjson.ReplaceField(args, name, a.Default)
		}
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s %q: arguments: %v", kind, exported, err)
		}
	}
	out, err := rawjson.ReplaceField(params, "arguments", args)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s %q: %v", kind, exported, err)
	}
	return out, nil
}

// overrideSet is one list's overrides as the warnings and lines see them:
// by upstream name, what each sets and the arguments it names.
type overrideSet struct {
	field, kind string // "tools", "tool"
	argsOf      string // what has the arguments: "the tool's input schema"
	items       []upstream.Item
	keys        []string                  // the overridden items' upstream names, sorted
	args        func(key string) []string // the arguments an override names, sorted
	has         func(it upstream.Item) []string
	describe    func(key string) string
}

// overrideSets are a server's overrides of tools and of prompts.
func overrideSets(o config.Overrides, items upstream.Catalog) [2]overrideSet {
	return [2]overrideSet{{
		field: "tools", kind: "tool", argsOf: "the tool's input schema", items: items.Tools, keys: slices.Sorted(maps.Keys(o.Tools)),
		args:     func(key string) []string { return slices.Sorted(maps.Keys(o.Tools[key].Arguments)) },
		has:      schemaProperties,
		describe: func(key string) string { return o.Tools[key].String() },
	}, {
		field: "prompts", kind: "prompt", argsOf: "the prompt", items: items.Prompts, keys: slices.Sorted(maps.Keys(o.Prompts)),
		args:     func(key string) []string { return slices.Sorted(maps.Keys(o.Prompts[key].Arguments)) },
		has:      promptArguments,
		describe: func(key string) string { return o.Prompts[key].String() },
	}}
}

// unmatchedOverrides warns of each override naming a tool or prompt the
// server does not have, or an argument the item does not have, with the
// name probably meant.
func unmatchedOverrides(server string, o config.Overrides, items upstream.Catalog) []string {
	var out []string
	for _, set := range overrideSets(o, items) {
		names := make([]string, len(set.items))
		for i, it := range set.items {
			names[i] = it.Key
		}
		for _, name := range set.keys {
			i := slices.Index(names, name)
			if i < 0 {
				out = append(out, fmt.Sprintf("server %q: overrides.%s names %q, which the server does not have%s", server, set.field, name, didYouMean(name, names)))
				continue
			}
			has := set.has(set.items[i])
			for _, arg := range set.args(name) {
				if !slices.Contains(has, arg) {
					out = append(out, fmt.Sprintf("server %q: overrides.%s.%s.arguments names %q, which %s does not have%s", server, set.field, name, arg, set.argsOf, didYouMean(arg, has)))
				}
			}
		}
	}
	return out
}

// schemaProperties are the property names of a tool's input schema.
func schemaProperties(tool upstream.Item) []string {
	var t struct {
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	if json.Unmarshal(tool.Raw, &t) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.InputSchema.Properties))
}

// promptArguments are the names of a prompt's arguments.
func promptArguments(prompt upstream.Item) []string {
	var p struct {
		Arguments []struct{ Name string } `json:"arguments"`
	}
	if json.Unmarshal(prompt.Raw, &p) != nil {
		return nil
	}
	var out []string
	for _, a := range p.Arguments {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return out
}

func didYouMean(word string, known []string) string {
	if m := suggest.Closest(word, known); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

// OverrideLines describes each listed server's overrides as the catalog
// built from servers under pol applies them, one line each, for
// mcptrunk check and list: the tool or prompt, the name the host sees it
// under and what of it is overridden (never a value); then each override
// that names an item or argument the server does not have, or a name
// another item keeps; and a server's own maxResultBytes. None when no
// server has overrides.
func OverrideLines(pol Policy, servers []Server) []string {
	return overrideLines(pol, servers, func(string) bool { return true })
}

// ProfileOverrideLines are OverrideLines for each profile's own
// overrides (by profile, then server name or identifier), in profile
// order: each overridden server's items as that profile's callers see
// them, the profile's overrides set over the server's own, each line
// naming the profile; a line the servers' own overrides give already
// (the warning of a server's own override naming no tool) is not said
// again. None when no profile has overrides.
func ProfileOverrideLines(pol Policy, servers []Server, profiles map[string]map[string]config.Overrides) []string {
	if len(profiles) == 0 {
		return nil
	}
	said := map[string]bool{}
	for _, line := range OverrideLines(pol, servers) {
		said[line] = true
	}
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		byID := map[string]config.Overrides{}
		for server, o := range profiles[name] {
			if id, err := naming.ServerID(server); err == nil {
				server = id
			}
			byID[server] = o
		}
		shaped := slices.Clone(servers)
		for i, s := range shaped {
			if o, ok := byID[s.Name]; ok {
				shaped[i].Spec.Overrides = s.Spec.Overrides.Over(o)
				shaped[i].Spec.MaxResultBytes = 0 // the server's own line says it
			}
		}
		for _, line := range overrideLines(pol, shaped, func(server string) bool { _, ok := byID[server]; return ok }) {
			if said[line] {
				continue
			}
			lines = append(lines, fmt.Sprintf("overrides: profile %q: %s", name, strings.TrimPrefix(line, "overrides: ")))
		}
	}
	return lines
}

// overrideLines are OverrideLines of the servers that only admits.
func overrideLines(pol Policy, servers []Server, only func(server string) bool) []string {
	var lines []string
	var cat *Catalog
	for _, s := range servers {
		if !only(s.Name) {
			continue
		}
		o := s.Spec.Overrides
		if s.Listed && s.Spec.MaxResultBytes > 0 {
			lines = append(lines, fmt.Sprintf("overrides: server %q: a tool result over maxResultBytes %d reaches the host cut, the whole kept for its caller", s.Name, s.Spec.MaxResultBytes))
		}
		if !s.Listed || len(o.Tools)+len(o.Prompts) == 0 {
			continue
		}
		if cat == nil {
			cat = Build(Input{Servers: servers, Policy: pol, Logger: slog.New(slog.DiscardHandler)})
		}
		for _, set := range overrideSets(o, s.Items) {
			for _, name := range set.keys {
				if exported := cat.exportedAs(set.kind, s.Name, name); exported != "" {
					lines = append(lines, fmt.Sprintf("overrides: server %q: %s %q is listed as %q: %s", s.Name, set.kind, name, exported, set.describe(name)))
				} else if slices.ContainsFunc(set.items, func(it upstream.Item) bool { return it.Key == name }) {
					lines = append(lines, fmt.Sprintf("overrides: server %q: %s %q is not listed (a filter, trunk.readOnly or a name another server claims leaves it out)", s.Name, set.kind, name))
				}
			}
		}
		_, _, warn := overrideTools(s.Name, o, filterItems(s.Spec.Tools, s.Items.Tools))
		_, _, pwarn := overridePrompts(s.Name, o, filterItems(s.Spec.Prompts, s.Items.Prompts))
		for _, w := range slices.Concat(warn, pwarn, unmatchedOverrides(s.Name, o, s.Items)) {
			lines = append(lines, "overrides: warning: "+w)
		}
	}
	return lines
}
