package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestOverridesParse: every field of a tool's override is read, values
// kept as JSON (null a value like any other), compacted to one line.
func TestOverridesParse(t *testing.T) {
	cfg, err := parseString(t, `{"mcpServers": {"notes": {"command": "notes", "overrides": {"tools": {
		"echo": {"name": "say", "title": "Say", "description": "Say it back", "annotations": {"readOnlyHint": true},
			"arguments": {"text": {"fixed": "fixed-text"}, "n": {"default": {"a": [1, 2]}}, "z": {"default": null}}},
		"add_note": {"description": "Add a note"}}}}}}`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Servers[0].Overrides
	echo, ok := o.Tool("echo")
	if !ok {
		t.Fatalf("no override of echo: %+v", o)
	}
	if echo.Name != "say" || echo.Title != "Say" || echo.Description != "Say it back" || string(echo.Annotations) != `{"readOnlyHint":true}` {
		t.Errorf("echo: %+v", echo)
	}
	args := map[string][2]string{}
	for name, a := range echo.Arguments {
		args[name] = [2]string{string(a.Default), string(a.Fixed)}
	}
	want := map[string][2]string{"text": {"", `"fixed-text"`}, "n": {`{"a":[1,2]}`, ""}, "z": {"null", ""}}
	if len(args) != len(want) {
		t.Errorf("arguments %q, want %q", args, want)
	}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("argument %s: %q, want %q", k, args[k], v)
		}
	}
	if got := echo.String(); got != "name say, title, description, annotations, n default, text fixed, z default" {
		t.Errorf("String() = %q", got)
	}
	if _, ok := o.Tool("search"); ok {
		t.Error("an override of a tool the config does not name")
	}
	// The same overrides are the same spec (a reload leaves the server
	// alone); another value is another spec.
	again, _ := parseString(t, `{"mcpServers": {"notes": {"command": "notes", "overrides": {"tools": {
		"echo": {"name": "say", "title": "Say", "description": "Say it back", "annotations": {"readOnlyHint": true},
			"arguments": {"text": {"fixed": "fixed-text"}, "n": {"default": {"a": [1, 2]}}, "z": {"default": null}}},
		"add_note": {"description": "Add a note"}}}}}}`, noEnv)
	if !cfg.Servers[0].Equal(again.Servers[0]) {
		t.Error("the same overrides parse to specs that differ")
	}
	other, _ := parseString(t, `{"mcpServers": {"notes": {"command": "notes", "overrides": {"tools": {"echo": {"arguments": {"text": {"fixed": "other"}}}}}}}}`, noEnv)
	if cfg.Servers[0].Equal(other.Servers[0]) {
		t.Error("different overrides parse to equal specs")
	}
}

// TestOverridesInvalid: each mistake is an error naming the server, the
// tool and the field, never quoting a fixed or default value.
func TestOverridesInvalid(t *testing.T) {
	cases := []struct{ overrides, want string }{
		{`[]`, `server "s": overrides: want object, got array`},
		{`{"tools": []}`, `server "s": overrides.tools: want object, got array`},
		{`{"tools": {"echo": 1}}`, `server "s": overrides.tools.echo: want object, got number`},
		{`{"tools": {"echo": {"name": "say it"}}}`, `server "s": overrides.tools.echo.name: must be 1 to 128 characters of A-Z, a-z, 0-9, _ and -, got "say it"`},
		{`{"tools": {"echo": {"name": ""}}}`, `server "s": overrides.tools.echo.name: must be 1 to 128`},
		{`{"tools": {"echo": {"name": 3}}}`, `server "s": overrides.tools.echo.name: want string, got number`},
		{`{"tools": {"echo": {"description": false}}}`, `server "s": overrides.tools.echo.description: want string, got boolean`},
		{`{"tools": {"echo": {"annotations": "ro"}}}`, `server "s": overrides.tools.echo.annotations: want object, got string`},
		{`{"tools": {"echo": {"arguments": {"text": {"fixed": "SECRET-1", "default": "SECRET-2"}}}}}`, `server "s": overrides.tools.echo.arguments.text: has both "default" and "fixed"; give one`},
		{`{"tools": {"echo": {"arguments": {"text": {}}}}}`, `server "s": overrides.tools.echo.arguments.text: wants "default" or "fixed"`},
		{`{"tools": {"echo": {"arguments": {"text": "SECRET-1"}}}}`, `server "s": overrides.tools.echo.arguments.text: want object, got string`},
		{`{"tools": {"a": {"name": "x"}, "b": {"name": "x"}}}`, `server "s": overrides.tools.b.name: "x" is already the new name of "a"`},
	}
	for _, c := range cases {
		_, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": `+c.overrides+`}}}`, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("overrides %s: error %v, want one containing %q", c.overrides, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("overrides %s: the error quotes a value: %v", c.overrides, err)
		}
	}
}

// TestOverridesUnknownKeys: a misspelt key inside an override is a
// warning with the key it probably meant; the tools' and arguments' own
// names are names, never warned about.
func TestOverridesUnknownKeys(t *testing.T) {
	cfg, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": {"tool": {}, "tools": {
		"descriptoin": {"descripton": "d", "arguments": {"text": {"fixd": 1, "fixed": 2}}}}}}}}`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`server "s": unknown key "overrides.tool" (did you mean "overrides.tools"?), ignored`,
		`server "s": unknown key "overrides.tools.descriptoin.descripton" (did you mean "overrides.tools.descriptoin.description"?), ignored`,
		`server "s": unknown key "overrides.tools.descriptoin.arguments.text.fixd" (did you mean "overrides.tools.descriptoin.arguments.text.fixed"?), ignored`,
	}
	if !slices.Equal(cfg.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if fixed := cfg.Servers[0].Overrides.Tools["descriptoin"].Arguments["text"].Fixed; !json.Valid(fixed) || string(fixed) != "2" {
		t.Errorf("fixed = %s", fixed)
	}
}

// TestPromptOverrides: a prompt's name, title, description and argument
// defaults are read; a default must be a string, as every prompt argument
// is, and the mistakes name the prompt and field.
func TestPromptOverrides(t *testing.T) {
	cfg, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": {"prompts": {
		"summarize": {"name": "digest", "title": "Digest", "description": "Sum it up", "arguments": {"style": {"default": "short"}}}}}}}}`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := cfg.Servers[0].Overrides.Prompt("summarize")
	if !ok || pr.Name != "digest" || pr.Title != "Digest" || pr.Description != "Sum it up" || string(pr.Arguments["style"].Default) != `"short"` {
		t.Errorf("summarize: %+v, %v", pr, ok)
	}
	if got := pr.String(); got != "name digest, title, description, style default" {
		t.Errorf("String() = %q", got)
	}
	for _, c := range []struct{ overrides, want string }{
		{`{"prompts": {"p": {"arguments": {"a": {"default": 3}}}}}`, `server "s": overrides.prompts.p.arguments.a.default: want string (a prompt's arguments are strings), got number`},
		{`{"prompts": {"p": {"arguments": {"a": {}}}}}`, `server "s": overrides.prompts.p.arguments.a.default: want string (a prompt's arguments are strings), got nothing`},
		{`{"prompts": {"p": {"name": "a b"}}}`, `server "s": overrides.prompts.p.name: must be 1 to 128 characters`},
		{`{"prompts": {"p": {"name": "x"}, "q": {"name": "x"}}}`, `server "s": overrides.prompts.q.name: "x" is already the new name of "p"`},
		{`{"prompts": 1}`, `server "s": overrides.prompts: want object, got number`},
	} {
		_, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": `+c.overrides+`}}}`, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("overrides %s: error %v, want one containing %q", c.overrides, err, c.want)
		}
	}
	// A tool and a prompt may take the same new name: they are in two lists.
	if _, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": {"tools": {"a": {"name": "x"}}, "prompts": {"b": {"name": "x"}}}}}}`, noEnv); err != nil {
		t.Errorf("a tool and a prompt of one new name: %v", err)
	}
	warned, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": {"prompts": {"p": {"arguments": {"a": {"default": "d", "fixed": "f"}}}}}}}}`, noEnv)
	if err != nil || !slices.Equal(warned.Warnings, []string{`server "s": unknown key "overrides.prompts.p.arguments.a.fixed", ignored`}) {
		t.Errorf("a prompt argument's fixed: %v, warnings %q", err, warned.Warnings)
	}
}

// TestOverridesExpand: a string default or fixed value takes ${VAR} from
// the environment, as command and env do (an account id kept out of the
// file); an unset one is an error naming the field, not the value.
func TestOverridesExpand(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "ACCOUNT" {
			return "acct-<42>", true
		}
		return "", false
	}
	cfg, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": {
		"tools": {"t": {"arguments": {"account": {"fixed": "${ACCOUNT}"}, "raw": {"default": {"v": "${ACCOUNT}"}}}}},
		"prompts": {"p": {"arguments": {"who": {"default": "id ${ACCOUNT}"}}}}}}}}`, env)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Servers[0].Overrides
	if got := string(o.Tools["t"].Arguments["account"].Fixed); got != `"acct-<42>"` {
		t.Errorf("fixed = %s", got)
	}
	if got := string(o.Tools["t"].Arguments["raw"].Default); got != `{"v":"${ACCOUNT}"}` {
		t.Errorf("an object's strings are not expanded: %s", got)
	}
	if got := string(o.Prompts["p"].Arguments["who"].Default); got != `"id acct-<42>"` {
		t.Errorf("prompt default = %s", got)
	}
	_, err = parseString(t, `{"mcpServers": {"s": {"command": "s", "overrides": {"tools": {"t": {"arguments": {"account": {"fixed": "${NOPE}"}}}}}}}}`, env)
	if err == nil || !strings.Contains(err.Error(), `server "s": overrides.tools.t.arguments.account.fixed:`) || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("an unset variable: %v", err)
	}
}

// TestResultBytes: maxResultBytes of a server's entry and of a tool's
// override are read, the override's winning for its tool; each is off by
// default, and a budget too small to hold a note, or not a number, is an
// error naming the field.
func TestResultBytes(t *testing.T) {
	cfg, err := parseString(t, `{"mcpServers": {"notes": {"command": "notes", "maxResultBytes": 65536,
		"overrides": {"tools": {"blob": {"maxResultBytes": 16384}, "echo": {"description": "d"}}}},
		"other": {"command": "other"}}}`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	notes, other := cfg.Servers[0], cfg.Servers[1]
	for _, c := range []struct {
		spec Spec
		tool string
		want int
	}{{notes, "blob", 16384}, {notes, "echo", 65536}, {notes, "add_note", 65536}, {other, "blob", 0}} {
		if got := c.spec.ResultBytes(c.tool); got != c.want {
			t.Errorf("%s: ResultBytes(%q) = %d, want %d", c.spec.Name, c.tool, got, c.want)
		}
	}
	if got := notes.Overrides.Tools["blob"].String(); got != "maxResultBytes 16384" {
		t.Errorf("String() = %q", got)
	}
	other.MaxResultBytes = 2048
	if other.Equal(cfg.Servers[1]) {
		t.Error("another budget is the same spec")
	}
	// A misspelt key is a warning with the key meant, here and in an override.
	typo, err := parseString(t, `{"mcpServers": {"s": {"command": "s", "maxResultsBytes": 4096, "overrides": {"tools": {"blob": {"maxResultByte": 4096}}}}}}`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{
		`server "s": unknown key "maxResultsBytes" (did you mean "maxResultBytes"?), ignored`,
		`server "s": unknown key "overrides.tools.blob.maxResultByte" (did you mean "overrides.tools.blob.maxResultBytes"?), ignored`,
	}; !slices.Equal(typo.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(typo.Warnings, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct{ entry, want string }{
		{`"maxResultBytes": 100`, `server "s": maxResultBytes: must be at least 1024 (or 0, off), got 100`},
		{`"maxResultBytes": "16k"`, `server "s": maxResultBytes: want integer, got string`},
		{`"overrides": {"tools": {"blob": {"maxResultBytes": -1}}}`, `server "s": overrides.tools.blob.maxResultBytes: must be at least 1024 (or 0, off), got -1`},
	} {
		_, err := parseString(t, `{"mcpServers": {"s": {"command": "s", `+c.entry+`}}}`, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.entry, err, c.want)
		}
	}
}
