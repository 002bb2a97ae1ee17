package hostcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The edits of a Codex config, as text: install and uninstall move whole
// [mcp_servers.NAME] tables (with their sub-tables, such as
// [mcp_servers.NAME.env]) and touch no other byte.

// tomlTable is one table of a TOML file: the comment lines right above its
// header (they speak of it), the header, and every line up to the next
// table's comments or header.
type tomlTable struct {
	start, end int
	path       []string
}

// owner is the server a table belongs to ("" when none).
func (t tomlTable) owner() string {
	if len(t.path) >= 2 && t.path[0] == "mcp_servers" {
		return t.path[1]
	}
	return ""
}

// tomlTables finds the tables of data by their header lines, skipping
// multi-line strings, where a line may look like a header.
func tomlTables(data []byte) []tomlTable {
	var out []tomlTable
	inString := ""
	comments := -1 // where the run of comment lines above this line began
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos + 1
		}
		line := string(data[pos:end])
		if inString != "" {
			if strings.Count(line, inString)%2 == 1 {
				inString = ""
			}
			comments = -1
		} else if path, ok := tomlHeader(line); ok {
			start := pos
			if comments >= 0 {
				start = comments
			}
			if n := len(out); n > 0 {
				out[n-1].end = start
			}
			out = append(out, tomlTable{start: start, end: len(data), path: path})
			comments = -1
		} else if strings.HasPrefix(strings.TrimSpace(line), "#") {
			if comments < 0 {
				comments = pos
			}
		} else {
			comments = -1
			for _, q := range []string{`"""`, `'''`} {
				if strings.Count(line, q)%2 == 1 {
					inString = q
				}
			}
		}
		pos = end
	}
	return out
}

// tomlHeader parses a table header line, [a.b] or [[a.b]], into its key
// path.
func tomlHeader(line string) ([]string, bool) {
	s := strings.TrimSpace(line)
	if i := strings.LastIndex(s, "#"); i >= 0 && strings.LastIndexAny(s, `"'`) < i {
		s = strings.TrimSpace(s[:i])
	}
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, false
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if strings.HasPrefix(s, "[") {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	var path []string
	for s = strings.TrimSpace(s); s != ""; {
		var key string
		switch s[0] {
		case '"':
			end := strings.IndexByte(s[1:], '"')
			for end >= 0 && s[end] == '\\' { // an escaped quote
				next := strings.IndexByte(s[end+2:], '"')
				if next < 0 {
					return nil, false
				}
				end += next + 1
			}
			if end < 0 || json.Unmarshal([]byte(s[:end+2]), &key) != nil {
				return nil, false
			}
			s = s[end+2:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, false
			}
			key, s = s[1:end+1], s[end+2:]
		default:
			end := strings.IndexAny(s, ". \t")
			if end < 0 {
				end = len(s)
			}
			key, s = s[:end], s[end:]
		}
		path = append(path, key)
		s = strings.TrimSpace(s)
		if s == "" {
			break
		}
		if s[0] != '.' {
			return nil, false
		}
		s = strings.TrimSpace(s[1:])
	}
	return path, len(path) > 0
}

// tomlKey writes a key bare when it may be, else quoted.
func tomlKey(k string) string {
	for _, c := range k {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return tomlString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// tomlString is a TOML basic string: JSON's escapes are TOML's.
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// codexTablesOf parses data, refusing what cannot be edited as tables: a
// server written inline or with dotted keys, outside a table of its own.
func codexTablesOf(loc Location, data []byte) ([]codexServer, []tomlTable, error) {
	servers, err := codexServers(data)
	if err != nil {
		return nil, nil, &ParseError{Host: loc.Host, Path: loc.Path, Err: err}
	}
	tables := tomlTables(data)
	for _, s := range servers {
		if !slices.ContainsFunc(tables, func(t tomlTable) bool { return t.owner() == s.name }) {
			return nil, nil, fmt.Errorf("%s: server %q is not written as a [mcp_servers.%s] table (inline, or with dotted keys), which is all install and uninstall edit: make it one",
				loc.Path, s.name, tomlKey(s.name))
		}
	}
	return servers, tables, nil
}

// codexInstallEdit is InstallEdit of a Codex config: the tables of the
// servers not kept go, and the entry for mcptrunk takes the place of the
// first of them (the end of the file when none goes).
func codexInstallEdit(loc Location, data []byte, name, command string, args []string, keep []string) ([]byte, error) {
	_, tables, err := codexTablesOf(loc, data)
	if err != nil {
		return nil, err
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	self := fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", tomlKey(name), tomlString(command), strings.Join(quoted, ", "))
	out, at := cutTables(data, tables, func(o string) bool { return o != "" && (o == name || !slices.Contains(keep, o)) })
	if at < 0 {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		return append(out, self...), nil
	}
	if at < len(out) {
		self += "\n"
	}
	return slices.Concat(out[:at], []byte(self), out[at:]), nil
}

// codexUninstallEdit is UninstallEdit of a Codex config.
func codexUninstallEdit(loc Location, current, backup []byte) (Uninstalled, error) {
	cur, curTables, err := codexTablesOf(loc, current)
	if err != nil {
		return Uninstalled{}, err
	}
	old, oldTables, err := codexTablesOf(Location{Host: loc.Host, Path: BackupPath(loc.Path)}, backup)
	if err != nil {
		return Uninstalled{}, err
	}
	installed := installedNames(loc, current)
	inBackup := map[string]codexServer{}
	for _, s := range old {
		inBackup[s.name] = s
	}
	var u Uninstalled
	present := map[string]bool{}
	for _, s := range cur {
		present[s.name] = true
		b, ok := inBackup[s.name]
		switch {
		case installed[s.name]:
		case !ok:
			u.Added = append(u.Added, s.name)
		case !sameCodexServer(s, b):
			u.Changed = append(u.Changed, s.name)
		}
	}
	// The file as install left it, nothing changed since: the backup.
	if len(u.Added) == 0 && len(u.Changed) == 0 && len(installed) == 1 {
		for name := range installed {
			var keep []string
			for _, s := range cur {
				if !installed[s.name] {
					keep = append(keep, s.name)
				}
			}
			command, args := installedEntry(cur, name)
			if again, err := codexInstallEdit(loc, backup, name, command, args, keep); err == nil && bytes.Equal(again, current) {
				return Uninstalled{Data: backup, Exact: true}, nil
			}
		}
	}
	// Else the current file, the installed entry replaced by the backup's
	// servers that the file no longer has, in the backup's order.
	var restored []byte
	for _, t := range oldTables {
		if o := t.owner(); o != "" && !present[o] {
			restored = append(restored, backup[t.start:t.end]...)
		}
	}
	out, at := cutTables(current, curTables, func(o string) bool { return installed[o] })
	if at < 0 {
		at = len(out)
	}
	if at == len(out) && bytes.HasSuffix(out, []byte("\n\n")) {
		// the blank line install put before an entry it appended
		out, at = out[:len(out)-1], at-1
	}
	if len(restored) > 0 && at < len(out) && !bytes.HasSuffix(restored, []byte("\n\n")) && out[at] != '\n' {
		// the blank line that parted the installed entry from what follows
		restored = append(restored, '\n')
	}
	u.Data = slices.Concat(out[:at], restored, out[at:])
	u.Exact = bytes.Equal(u.Data, backup)
	return u, nil
}

// sameCodexServer: the same entry, or the same reason it has none.
func sameCodexServer(a, b codexServer) bool {
	if a.entry == nil || b.entry == nil {
		return a.entry == nil && b.entry == nil && a.problem == b.problem
	}
	return SameEntry(a.entry, b.entry)
}

// installedEntry is what the installed entry name runs.
func installedEntry(servers []codexServer, name string) (command string, args []string) {
	var e struct {
		Command string
		Args    []string
	}
	for _, s := range servers {
		if s.name == name {
			_ = json.Unmarshal(s.entry, &e)
		}
	}
	return e.Command, e.Args
}

// cutTables is data without the tables whose owner drop says go, and
// where the first of them was in the result (-1: none went).
func cutTables(data []byte, tables []tomlTable, drop func(owner string) bool) (out []byte, at int) {
	at, pos := -1, 0
	for _, t := range tables {
		if !drop(t.owner()) {
			continue
		}
		out = append(out, data[pos:t.start]...)
		if at < 0 {
			at = len(out)
		}
		pos = t.end
	}
	return append(out, data[pos:]...), at
}
