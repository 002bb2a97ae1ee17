package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/mcptrunk/mcptrunk/naming"
)

// Overrides are a server's items reshaped for the model ("overrides" in a
// server's entry): what the host sees of a tool and what its calls carry.
// They are config, applied when the catalog is exported; the server's own
// definitions are what pinning records. The "tools" filter stays the
// filter; an override never admits a tool the filter leaves out.
type Overrides struct {
	// Tools maps a tool's upstream name to its override.
	Tools map[string]ToolOverride `json:"tools,omitempty"`
	// Prompts maps a prompt's upstream name to its override.
	Prompts map[string]PromptOverride `json:"prompts,omitempty"`
}

// PromptOverride is one prompt's override. Empty fields leave the
// server's own.
type PromptOverride struct {
	// Name replaces the prompt's name inside the server's namespace;
	// prompts/get of it goes to the upstream name.
	Name string `json:"name,omitempty"`
	// Title and Description replace the prompt's own.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Arguments maps an argument to its default (a JSON string, as every
	// prompt argument is): listed as not required, sent when a get leaves
	// it out.
	Arguments map[string]ArgumentOverride `json:"arguments,omitempty"`
}

// Prompt returns the override of the prompt upstream calls name, and
// whether there is one.
func (o Overrides) Prompt(name string) (PromptOverride, bool) {
	p, ok := o.Prompts[name]
	return p, ok
}

// Over is o with a profile's overrides p set over it: each of p's tool
// and prompt overrides field by field over o's of the same item (p's
// non-empty fields win, annotations member by member, arguments by
// argument). o itself is not changed.
func (o Overrides) Over(p Overrides) Overrides {
	if len(p.Tools) == 0 && len(p.Prompts) == 0 {
		return o
	}
	out := Overrides{Tools: maps.Clone(o.Tools), Prompts: maps.Clone(o.Prompts)}
	for name, t := range p.Tools {
		if out.Tools == nil {
			out.Tools = map[string]ToolOverride{}
		}
		base := out.Tools[name]
		base.Name = cmp.Or(t.Name, base.Name)
		base.Title = cmp.Or(t.Title, base.Title)
		base.Description = cmp.Or(t.Description, base.Description)
		base.Annotations = mergeObjects(base.Annotations, t.Annotations)
		base.Arguments = overArguments(base.Arguments, t.Arguments)
		if t.MaxResultBytes > 0 {
			base.MaxResultBytes = t.MaxResultBytes
		}
		out.Tools[name] = base
	}
	for name, pr := range p.Prompts {
		if out.Prompts == nil {
			out.Prompts = map[string]PromptOverride{}
		}
		base := out.Prompts[name]
		base.Name = cmp.Or(pr.Name, base.Name)
		base.Title = cmp.Or(pr.Title, base.Title)
		base.Description = cmp.Or(pr.Description, base.Description)
		base.Arguments = overArguments(base.Arguments, pr.Arguments)
		out.Prompts[name] = base
	}
	return out
}

// overArguments is base with over's arguments replacing base's own.
func overArguments(base, over map[string]ArgumentOverride) map[string]ArgumentOverride {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]ArgumentOverride{}
	}
	maps.Copy(out, over)
	return out
}

// mergeObjects is the JSON object base with over's members set over its
// own (either may be empty; both are objects, as decoding checked).
func mergeObjects(base, over json.RawMessage) json.RawMessage {
	if len(over) == 0 {
		return base
	}
	if len(base) == 0 {
		return over
	}
	var m, o map[string]json.RawMessage
	if json.Unmarshal(base, &m) != nil || json.Unmarshal(over, &o) != nil {
		return over
	}
	maps.Copy(m, o)
	b, err := json.Marshal(m)
	if err != nil {
		return over
	}
	return b
}

// ToolOverride is one tool's override. Empty fields leave the server's own.
type ToolOverride struct {
	// Name replaces the tool's name inside the server's namespace
	// (mcp__<server>__<Name>); calls of it go to the upstream name.
	Name string `json:"name,omitempty"`
	// Title and Description replace the tool's own.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Annotations are set member by member over the tool's own
	// annotations (a JSON object; the server's others stay).
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Arguments maps an argument (a property of the input schema) to its
	// default or fixed value.
	Arguments map[string]ArgumentOverride `json:"arguments,omitempty"`
	// MaxResultBytes replaces the server's maxResultBytes for this tool:
	// what of one result reaches the model (0 leaves the server's).
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
}

// ArgumentOverride is one argument's default or fixed value (exactly one
// is set), a JSON value sent as it is written.
type ArgumentOverride struct {
	// Default shows in the schema as the property's "default" and is sent
	// when a call leaves the argument out.
	Default json.RawMessage `json:"default,omitempty"`
	// Fixed is removed from the schema (and from "required") and always
	// sent; a call that gives the argument is refused.
	Fixed json.RawMessage `json:"fixed,omitempty"`
}

// Tool returns the override of the tool upstream calls name, and whether
// there is one.
func (o Overrides) Tool(name string) (ToolOverride, bool) {
	t, ok := o.Tools[name]
	return t, ok
}

type rawOverrides struct {
	Tools   json.RawMessage `json:"tools"`
	Prompts json.RawMessage `json:"prompts"`
}

type rawPromptOverride struct {
	Name        json.RawMessage `json:"name"`
	Title       json.RawMessage `json:"title"`
	Description json.RawMessage `json:"description"`
	Arguments   json.RawMessage `json:"arguments"`
}

type rawPromptArgumentOverride struct {
	Default json.RawMessage `json:"default"`
}

type rawToolOverride struct {
	Name           json.RawMessage `json:"name"`
	Title          json.RawMessage `json:"title"`
	Description    json.RawMessage `json:"description"`
	Annotations    json.RawMessage `json:"annotations"`
	Arguments      json.RawMessage `json:"arguments"`
	MaxResultBytes json.RawMessage `json:"maxResultBytes"`
}

type rawArgumentOverride struct {
	Default json.RawMessage `json:"default"`
	Fixed   json.RawMessage `json:"fixed"`
}

// maxToolName is the longest tool name MCP allows (SEP-986).
const maxToolName = 128

// overrides decodes and validates "overrides". Values are quoted in no
// error: a fixed argument may be an account id or a token.
func (p *fieldErrs) overrides(raw json.RawMessage, lookup func(string) (string, bool)) Overrides {
	var o Overrides
	var ro rawOverrides
	if !p.object(raw, "overrides", &ro) {
		return o
	}
	p.named(ro.Tools, "overrides.tools", "tool", func(name string, raw json.RawMessage, field string) string {
		if o.Tools == nil {
			o.Tools = map[string]ToolOverride{}
		}
		t := p.toolOverride(raw, field, lookup)
		o.Tools[name] = t
		return t.Name
	})
	p.named(ro.Prompts, "overrides.prompts", "prompt", func(name string, raw json.RawMessage, field string) string {
		if o.Prompts == nil {
			o.Prompts = map[string]PromptOverride{}
		}
		pr := p.promptOverride(raw, field, lookup)
		o.Prompts[name] = pr
		return pr.Name
	})
	return o
}

// named decodes an object of overrides by item name (field, of items of
// kind), calling each for every one, which returns the item's new name
// or "". Two items given one new name are an error naming the second in
// the file's order.
func (p *fieldErrs) named(raw json.RawMessage, field, kind string, each func(name string, raw json.RawMessage, field string) string) {
	if rawAbsent(raw) {
		return
	}
	if rawKind(raw) != "object" {
		p.wrongType(field, "object", raw)
		return
	}
	names, vals, err := decodeRawObject(raw)
	if err != nil {
		p.add(field, err)
		return
	}
	renamed := map[string]string{} // new name -> the item that took it
	for i, name := range names {
		ifield := keyField(field, name)
		if name == "" {
			p.addf(field, "empty %s name", kind)
			continue
		}
		if n := each(name, vals[i], ifield); n != "" {
			if other, dup := renamed[n]; dup {
				p.addf(ifield+".name", "%q is already the new name of %q", n, other)
			}
			renamed[n] = name
		}
	}
}

// itemName decodes an override's new name: a tool's or a prompt's, 1 to
// 128 characters of [A-Za-z0-9_-] (what MCP allows of a tool name, and
// what every host reads), or "" when it is left out or wrong.
func (p *fieldErrs) itemName(raw json.RawMessage, field string) string {
	name, _ := p.str(raw, field)
	if !rawAbsent(raw) && (name == "" || naming.Sanitize(name) != name || len(name) > maxToolName) {
		p.addf(field, "must be 1 to %d characters of A-Z, a-z, 0-9, _ and -, got %q", maxToolName, name)
		return ""
	}
	return name
}

// promptOverride decodes one prompt's override: its arguments take a
// default only, a string (a prompt's arguments are strings).
func (p *fieldErrs) promptOverride(raw json.RawMessage, field string, lookup func(string) (string, bool)) PromptOverride {
	var pr PromptOverride
	var rp rawPromptOverride
	if !p.requiredObject(raw, field, &rp) {
		return pr
	}
	pr.Name = p.itemName(rp.Name, field+".name")
	pr.Title, _ = p.str(rp.Title, field+".title")
	pr.Description, _ = p.str(rp.Description, field+".description")
	pr.Arguments = eachArgument(p, rp.Arguments, field, func(afield string, ra rawPromptArgumentOverride) (ArgumentOverride, bool) {
		if rawKind(ra.Default) != "string" {
			p.addf(afield+".default", "want string (a prompt's arguments are strings), got %s", cmp.Or(rawKind(ra.Default), "nothing"))
			return ArgumentOverride{}, false
		}
		return ArgumentOverride{Default: p.argValue(ra.Default, afield+".default", lookup)}, true
	})
	return pr
}

// eachArgument decodes an override's "arguments" object (under field):
// each member an object decoded into R and turned into its override by
// one, which reports whether it is usable. A member that is not an object
// is an error naming it; nil when arguments are left out or unusable.
func eachArgument[R any](p *fieldErrs, raw json.RawMessage, field string, one func(afield string, ra R) (ArgumentOverride, bool)) map[string]ArgumentOverride {
	if rawAbsent(raw) {
		return nil
	}
	if rawKind(raw) != "object" {
		p.wrongType(field+".arguments", "object", raw)
		return nil
	}
	names, vals, err := decodeRawObject(raw)
	if err != nil {
		p.add(field+".arguments", err)
		return nil
	}
	args := make(map[string]ArgumentOverride, len(names))
	for i, name := range names {
		afield := keyField(field+".arguments", name)
		var ra R
		if !p.requiredObject(vals[i], afield, &ra) {
			continue
		}
		if a, ok := one(afield, ra); ok {
			args[name] = a
		}
	}
	return args
}

// toolOverride decodes one tool's override.
func (p *fieldErrs) toolOverride(raw json.RawMessage, field string, lookup func(string) (string, bool)) ToolOverride {
	var t ToolOverride
	var rt rawToolOverride
	if !p.requiredObject(raw, field, &rt) {
		return t
	}
	t.Name = p.itemName(rt.Name, field+".name")
	t.Title, _ = p.str(rt.Title, field+".title")
	t.Description, _ = p.str(rt.Description, field+".description")
	t.MaxResultBytes = p.resultBudget(rt.MaxResultBytes, field+".maxResultBytes")
	if !rawAbsent(rt.Annotations) {
		if rawKind(rt.Annotations) != "object" || !json.Valid(rt.Annotations) {
			p.wrongType(field+".annotations", "object", rt.Annotations)
		} else {
			t.Annotations = compact(rt.Annotations)
		}
	}
	t.Arguments = eachArgument(p, rt.Arguments, field, func(afield string, ra rawArgumentOverride) (ArgumentOverride, bool) {
		// null is a value an argument can be given, so only a member
		// left out is absent here.
		switch def, fixed := len(ra.Default) > 0, len(ra.Fixed) > 0; {
		case def && fixed:
			p.addf(afield, `has both "default" and "fixed"; give one`)
		case !def && !fixed:
			p.addf(afield, `wants "default" or "fixed"`)
		default:
			return ArgumentOverride{Default: p.argValue(ra.Default, afield+".default", lookup), Fixed: p.argValue(ra.Fixed, afield+".fixed", lookup)}, true
		}
		return ArgumentOverride{}, false
	})
	return t
}

// MinResultBytes is the least budget maxResultBytes takes: below it the
// beginning of a result and the note saying how to read the rest would
// leave the model nothing to go on.
const MinResultBytes = 1024

// resultBudget decodes a maxResultBytes: 0 (off) when it is left out, else
// at least MinResultBytes.
func (p *fieldErrs) resultBudget(raw json.RawMessage, field string) int {
	n, ok := p.integer(raw, field)
	if ok && n != 0 && n < MinResultBytes {
		p.addf(field, "must be at least %d (or 0, off), got %d", MinResultBytes, n)
		return 0
	}
	return n
}

// argValue is an argument's default or fixed value as it is sent: a
// string with ${VAR} expanded (an account id kept in the environment),
// anything else as written; nil when it is left out.
func (p *fieldErrs) argValue(raw json.RawMessage, field string, lookup func(string) (string, bool)) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var str string
	if rawKind(raw) != "string" || !bytes.Contains(raw, []byte("${")) || json.Unmarshal(raw, &str) != nil {
		return compact(raw)
	}
	str, ok := p.expand(field, str, lookup)
	if !ok {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(str) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// compact is v without insignificant whitespace (nil stays nil), so that
// the value spliced into a schema or a call is one line.
func compact(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return json.RawMessage(b.Bytes())
}

// String is the override as check and list describe it: which of its
// fields are set, not their values.
func (t ToolOverride) String() string {
	var parts []string
	if t.Name != "" {
		parts = append(parts, "name "+t.Name)
	}
	if t.Title != "" {
		parts = append(parts, "title")
	}
	if t.Description != "" {
		parts = append(parts, "description")
	}
	if len(t.Annotations) > 0 {
		parts = append(parts, "annotations")
	}
	for _, arg := range sortedMapKeys(t.Arguments) {
		if len(t.Arguments[arg].Fixed) > 0 {
			parts = append(parts, fmt.Sprintf("%s fixed", arg))
		} else {
			parts = append(parts, fmt.Sprintf("%s default", arg))
		}
	}
	if t.MaxResultBytes > 0 {
		parts = append(parts, fmt.Sprintf("maxResultBytes %d", t.MaxResultBytes))
	}
	return strings.Join(parts, ", ")
}

// String is the override as check and list describe it: which of its
// fields are set, not their values.
func (pr PromptOverride) String() string {
	return ToolOverride{Name: pr.Name, Title: pr.Title, Description: pr.Description, Arguments: pr.Arguments}.String()
}

// ResultBytes is the budget of one result of the tool upstream calls
// name: its override's maxResultBytes, else the server's; 0 is none.
func (s Spec) ResultBytes(name string) int {
	if t, ok := s.Overrides.Tools[name]; ok && t.MaxResultBytes > 0 {
		return t.MaxResultBytes
	}
	return s.MaxResultBytes
}
