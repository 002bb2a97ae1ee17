package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/suggest"
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
	if len(o.Tools) == 0 {
		return items, nil, nil
	}
	taken := make(map[string]bool, len(items))
	for _, it := range items {
		if t, ok := o.Tool(it.Key); !ok || t.Name == "" {
			taken[it.Key] = true
		}
	}
	out = make([]upstream.Item, 0, len(items))
	for _, it := range items {
		t, ok := o.Tool(it.Key)
		if !ok {
			out = append(out, it)
			continue
		}
		if t.Name != "" && t.Name != it.Key {
			if taken[t.Name] {
				warn = append(warn, fmt.Sprintf("server %q: overrides.tools.%s.name %q is the name of another of its tools, which keeps it; %q keeps its own", server, it.Key, t.Name, it.Key))
				t.Name = ""
			} else {
				if names == nil {
					names = map[string]string{}
				}
				names[it.Key] = t.Name
			}
		}
		raw, err := OverrideTool(it.Raw, t)
		if err != nil {
			warn = append(warn, fmt.Sprintf("server %q: overrides.tools.%s not applied: %v", server, it.Key, err))
			out = append(out, it)
			continue
		}
		out = append(out, upstream.Item{Key: it.Key, Raw: raw})
	}
	return out, names, warn
}

// renamed adds, for each withheld tool an override renames, the new name
// with the same reason: the host knows the tool by that name, and a call
// of it is refused saying why. A name that is another tool's own keeps
// that tool's entry.
func (w withheldItems) renamed(o config.Overrides) {
	aliases := map[string]string{}
	for raw, why := range w[pin.Tools] {
		if t, ok := o.Tool(raw); ok && t.Name != "" {
			if _, taken := w[pin.Tools][t.Name]; !taken {
				aliases[t.Name] = why
			}
		}
	}
	for name, why := range aliases {
		w.add(pin.Tools, name, why)
	}
}

// OverrideTool is a tool's definition under its override: the name,
// title and description replaced, the annotations set member by member
// over the tool's own, each default argument's property given a
// "default", and each fixed argument removed from the input schema's
// properties and required list. Everything else keeps its bytes.
func OverrideTool(tool json.RawMessage, t config.ToolOverride) (json.RawMessage, error) {
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
	if len(t.Arguments) == 0 {
		return tool, nil
	}
	tool, err = editMember(tool, "inputSchema", func(schema json.RawMessage) (json.RawMessage, error) {
		return overrideSchema(schema, t.Arguments)
	})
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	return tool, nil
}

// overrideSchema edits an input schema's properties and required list for
// the arguments' defaults and fixed values, in the arguments' name order.
func overrideSchema(schema json.RawMessage, args map[string]config.ArgumentOverride) (json.RawMessage, error) {
	var fixed []string
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
	if err != nil || len(fixed) == 0 {
		return schema, err
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

// Arguments is a call's params with the tool's override applied to its
// arguments: each fixed value set, each default set where the call leaves
// the argument out. A call that gives a fixed argument itself is refused,
// naming the tool as the host knows it (exported) and the argument.
func Arguments(exported string, t config.ToolOverride, params json.RawMessage) (json.RawMessage, error) {
	if len(t.Arguments) == 0 {
		return params, nil
	}
	args := json.RawMessage(`{}`)
	start, end, found, err := rawjson.FieldSpan(params, "arguments")
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: %v", err)
	}
	if found && string(params[start:end]) != "null" {
		args = params[start:end]
	}
	for _, name := range slices.Sorted(maps.Keys(t.Arguments)) {
		a := t.Arguments[name]
		given := rawjson.HasField(args, name)
		switch {
		case len(a.Fixed) > 0 && given:
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tool %q: argument %q is fixed by the trunk's configuration and may not be given; call it without %q", exported, name, name)
		case len(a.Fixed) > 0:
			args, err = rawjson.ReplaceField(args, name, a.Fixed)
		case !given:
			args, err = rawjson.ReplaceField(args, name, a.Default)
		}
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: arguments: %v", err)
		}
	}
	out, err := rawjson.ReplaceField(params, "arguments", args)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: %v", err)
	}
	return out, nil
}

// unmatchedOverrides warns of each override naming a tool the server does
// not have, or an argument its tool's input schema does not have, with the
// name probably meant.
func unmatchedOverrides(server string, o config.Overrides, tools []upstream.Item) []string {
	var out []string
	names := make([]string, len(tools))
	for i, it := range tools {
		names[i] = it.Key
	}
	for _, name := range slices.Sorted(maps.Keys(o.Tools)) {
		i := slices.Index(names, name)
		if i < 0 {
			out = append(out, fmt.Sprintf("server %q: overrides.tools names %q, which the server does not have%s", server, name, didYouMean(name, names)))
			continue
		}
		props := schemaProperties(tools[i].Raw)
		for _, arg := range slices.Sorted(maps.Keys(o.Tools[name].Arguments)) {
			if !slices.Contains(props, arg) {
				out = append(out, fmt.Sprintf("server %q: overrides.tools.%s.arguments names %q, which the tool's input schema does not have%s", server, name, arg, didYouMean(arg, props)))
			}
		}
	}
	return out
}

// schemaProperties are the property names of a tool's input schema.
func schemaProperties(tool json.RawMessage) []string {
	var t struct {
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	if json.Unmarshal(tool, &t) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.InputSchema.Properties))
}

func didYouMean(word string, known []string) string {
	if m := suggest.Closest(word, known); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

// OverrideLines describes each listed server's overrides as the catalog
// built from servers under pol applies them, one line each, for
// mcptrunk check and list: the tool, the name the host sees it under and
// what of it is overridden (never a value); then each override that
// names a tool or argument the server does not have, or a name another
// tool keeps. None when no server has overrides.
func OverrideLines(pol Policy, servers []Server) []string {
	var lines []string
	var cat *Catalog
	for _, s := range servers {
		o := s.Spec.Overrides
		if !s.Listed || len(o.Tools) == 0 {
			continue
		}
		if cat == nil {
			cat = Build(Input{Servers: servers, Policy: pol, Logger: slog.New(slog.DiscardHandler)})
		}
		for _, name := range slices.Sorted(maps.Keys(o.Tools)) {
			if exported := cat.renamed(s.Name, name); exported != "" {
				lines = append(lines, fmt.Sprintf("overrides: server %q: tool %q is listed as %q: %s", s.Name, name, exported, o.Tools[name]))
			} else if slices.ContainsFunc(s.Items.Tools, func(it upstream.Item) bool { return it.Key == name }) {
				lines = append(lines, fmt.Sprintf("overrides: server %q: tool %q is not listed (a filter, trunk.readOnly or a name another server claims leaves it out)", s.Name, name))
			}
		}
		_, _, warn := overrideTools(s.Name, o, filterItems(s.Spec.Tools, s.Items.Tools))
		for _, w := range append(warn, unmatchedOverrides(s.Name, o, s.Items.Tools)...) {
			lines = append(lines, "overrides: warning: "+w)
		}
	}
	return lines
}
