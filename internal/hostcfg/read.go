package hostcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// member is one member of a JSON object, in file order.
type member struct {
	key   string
	value json.RawMessage
}

// ParseError is a host's file that cannot be parsed. Nothing reads from
// it, or writes over it, further.
type ParseError struct {
	Host *Host
	Path string
	Err  error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %s's file cannot be parsed: %v (nothing is read from it or written to it until it does)", e.Path, e.Host.Name, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// plain returns a host file's bytes as plain JSON of the same length: for
// hosts whose files are JSON with comments, without them.
func plain(host *Host, data []byte) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if host.jsonc() {
		return StripJSONC(data)
	}
	return data, nil
}

// toml: Codex's config is TOML (codex.go), every other host's JSON.
func (h *Host) toml() bool { return h.ID == "codex" }

// jsonc: Zed, VS Code and Cursor (a fork of VS Code) read their settings as
// JSON with comments and trailing commas; Gemini CLI strips comments from
// its settings.json before parsing it.
func (h *Host) jsonc() bool {
	return h.ID == "zed" || h.ID == "vscode" || h.ID == "cursor" || h.ID == "gemini"
}

// objectMembers decodes a JSON object's members in order, refusing a key
// defined twice (the hosts would each pick a different one).
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return nil, syntaxErr(data, err)
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object")
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxErr(data, err)
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, syntaxErr(data, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("%q is defined more than once", key)
		}
		seen[key] = true
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxErr(data, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("data after the object")
	}
	return out, nil
}

// syntaxErr adds the line and column to a JSON syntax error.
func syntaxErr(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	line, col := 1, 1
	for _, c := range data[:min(int(se.Offset), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %v", line, col, err)
}

func lookup(ms []member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// serversOf returns the members of the object that holds loc's servers in
// a file's plain JSON, nil when the file has none.
func serversOf(loc Location, data []byte) ([]member, error) {
	top, err := objectMembers(data)
	if err != nil {
		return nil, err
	}
	if loc.Scope == ScopeLocal {
		projects, ok := lookup(top, "projects")
		if !ok || isNull(projects) {
			return nil, nil
		}
		ps, err := objectMembers(projects)
		if err != nil {
			return nil, fmt.Errorf("projects: %w", err)
		}
		p, ok := lookupProject(ps, loc.Project)
		if !ok {
			return nil, nil
		}
		if top, err = objectMembers(p); err != nil {
			return nil, fmt.Errorf("projects[%q]: %w", loc.Project, err)
		}
	}
	servers, ok := lookup(top, loc.Host.Key)
	if !ok || isNull(servers) {
		return nil, nil
	}
	ms, err := objectMembers(servers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc.Host.Key, err)
	}
	return ms, nil
}

// lookupProject finds a project directory among Claude Code's projects,
// whose keys are absolute paths (with forward slashes on Windows).
func lookupProject(ps []member, dir string) (json.RawMessage, bool) {
	norm := func(s string) string { return strings.TrimSuffix(strings.ReplaceAll(s, `\`, "/"), "/") }
	for _, p := range ps {
		if p.key == dir || norm(p.key) == norm(dir) {
			return p.value, true
		}
	}
	return nil, false
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// Read reads the servers of one location from data, the file's content,
// converting each to mcptrunk's form; e gives the home directory, the OS
// and the environment the entries' variables refer to. A file that cannot be parsed is a
// *ParseError; a file without servers gives none.
func Read(loc Location, data []byte, e Env) ([]Server, error) {
	if loc.Host.toml() {
		return readCodex(loc, data, varContext{goos: e.GOOS, home: e.Home, project: loc.Project, getenv: e.getenv})
	}
	p, err := plain(loc.Host, data)
	if err == nil {
		var ms []member
		if ms, err = serversOf(loc, p); err == nil {
			c := varContext{goos: e.GOOS, home: e.Home, project: loc.Project, getenv: e.getenv}
			out := make([]Server, 0, len(ms))
			for _, m := range ms {
				out = append(out, convert(loc, m.key, m.value, c))
			}
			return out, nil
		}
	}
	return nil, &ParseError{Host: loc.Host, Path: loc.Path, Err: err}
}

// ReadFile is Read of the file at loc.Path, read with readFile (os.ReadFile
// in production). A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadFile(loc Location, readFile func(string) ([]byte, error), e Env) ([]Server, error) {
	data, err := readFile(loc.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fs.ErrNotExist
		}
		return nil, fmt.Errorf("%s: %w", loc.Path, err)
	}
	return Read(loc, data, e)
}
