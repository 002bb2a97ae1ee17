package hostcfg

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in ~/.codex/config.toml (or $CODEX_HOME's), one
// [mcp_servers.NAME] table each. Reading goes through a TOML parser; the
// edits of install and uninstall splice those tables as text
// (codex_edit.go), so that every other byte of the file, comments and
// order included, stays as the user wrote it: no TOML library here writes
// a document back as it was read.

// codexEntry maps one Codex server table to the fields convert reads, the
// other hosts' names for the same things.
func codexEntry(table map[string]any) (json.RawMessage, []string, error) {
	out := map[string]any{}
	var notes []string
	headers := map[string]any{}
	timeouts := map[string]string{}
	tools := map[string]any{}
	for k, v := range table {
		switch k {
		case "command", "args", "env", "cwd", "url":
			out[k] = escapeAll(v) // Codex expands no variables: a "${" is text
		case "http_headers":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("http_headers: want a table of strings")
			}
			for h, s := range m {
				headers[h] = escapeAll(s)
			}
		case "env_http_headers": // header -> the variable holding its value
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("env_http_headers: want a table of strings")
			}
			for h, name := range m {
				s, ok := name.(string)
				if !ok || !validVarName(s) {
					return nil, nil, fmt.Errorf("env_http_headers.%s: want a variable name", h)
				}
				headers[h] = "${" + s + "}"
			}
		case "bearer_token_env_var":
			s, ok := v.(string)
			if !ok || !validVarName(s) {
				return nil, nil, fmt.Errorf("bearer_token_env_var: want a variable name")
			}
			headers["Authorization"] = "Bearer ${" + s + "}"
		case "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec":
			d, err := codexDuration(k, v)
			if err != nil {
				return nil, nil, err
			}
			if k == "tool_timeout_sec" {
				timeouts["call"] = d
			} else {
				timeouts["connect"] = d
			}
		case "enabled":
			b, ok := v.(bool)
			if !ok {
				return nil, nil, fmt.Errorf("enabled: want true or false")
			}
			out["disabled"] = !b
		case "enabled_tools":
			tools["allow"] = v
		case "disabled_tools":
			tools["deny"] = v
		case "env_vars":
			notes = append(notes, `"env_vars" (variables Codex passes on from its own environment) is not carried over: `+
				`mcptrunk passes its whole environment to the servers it starts, so set them where the host starts mcptrunk`)
		default:
			out[k] = v // convert notes it as not carried over
		}
	}
	if len(headers) > 0 {
		out["headers"] = headers
	}
	if len(tools) > 0 {
		out["codexTools"] = tools
	}
	if len(timeouts) > 0 {
		out["codexTimeouts"] = timeouts
	}
	raw, err := json.Marshal(out)
	return raw, notes, err
}

// escapeAll escapes "${" in every string of v, for mcptrunk, which would
// expand it (the references codexEntry makes itself are not escaped).
func escapeAll(v any) any {
	switch v := v.(type) {
	case string:
		return escape(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = escapeAll(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = escapeAll(e)
		}
		return out
	}
	return v
}

// codexDuration is a Codex timeout as mcptrunk writes durations.
func codexDuration(key string, v any) (string, error) {
	unit := "s"
	if key == "startup_timeout_ms" {
		unit = "ms"
	}
	switch n := v.(type) {
	case int64:
		if n > 0 {
			return fmt.Sprintf("%d%s", n, unit), nil
		}
	case float64:
		if n > 0 {
			return fmt.Sprintf("%g%s", n, unit), nil
		}
	}
	return "", fmt.Errorf("%s: want a positive number", key)
}

// codexExtras takes the fields codexEntry put under names of its own.
func (v *converter) codexExtras() {
	if v.loc.Host.ID != "codex" {
		return
	}
	if raw, ok := v.take("codexTools"); ok {
		var f struct{ Allow, Deny json.RawMessage }
		_ = json.Unmarshal(raw, &f)
		if f.Allow != nil {
			v.tools().Allow = v.strs("enabled_tools", f.Allow)
		}
		if f.Deny != nil {
			v.tools().Deny = v.strs("disabled_tools", f.Deny)
		}
	}
	if raw, ok := v.take("codexTimeouts"); ok {
		var t timeoutsEntry
		_ = json.Unmarshal(raw, &t)
		v.e.Timeouts = &t
	}
}

// codexServer is one server of a Codex config, mapped for convert.
type codexServer struct {
	name    string
	entry   json.RawMessage
	notes   []string
	problem string
}

// codexServers parses a Codex config and returns its servers in file
// order.
func codexServers(data []byte) ([]codexServer, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, err
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return nil, nil
	}
	tables, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("mcp_servers: want a table of servers")
	}
	// File order: the order the parser met each server's first key.
	order := map[string]int{}
	for i, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "mcp_servers" {
			if _, seen := order[k[1]]; !seen {
				order[k[1]] = i
			}
		}
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	out := make([]codexServer, 0, len(names))
	for _, name := range names {
		s := codexServer{name: name}
		if table, ok := tables[name].(map[string]any); !ok {
			s.problem = "want a table"
		} else if s.entry, s.notes, err = codexEntry(table); err != nil {
			s.problem = err.Error()
		}
		out = append(out, s)
	}
	return out, nil
}

// readCodex is Read of a Codex config.
func readCodex(loc Location, data []byte, c varContext) ([]Server, error) {
	servers, err := codexServers(data)
	if err != nil {
		return nil, &ParseError{Host: loc.Host, Path: loc.Path, Err: err}
	}
	out := make([]Server, 0, len(servers))
	for _, cs := range servers {
		if cs.problem != "" {
			out = append(out, Server{Name: cs.name, From: loc, Problem: cs.problem})
			continue
		}
		s := convert(loc, cs.name, cs.entry, c)
		s.Notes = append(cs.notes, s.Notes...)
		out = append(out, s)
	}
	return out, nil
}
