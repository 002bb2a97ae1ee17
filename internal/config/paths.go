package config

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// runsTrunk reports whether a server entry starts mcptrunk serving a
// config: the entry mcptrunk install gives a host. Pointed at that host's
// own file, the trunk would start itself, so the entry is skipped with a
// note rather than failing the load. "mcptrunk connect" (or bridge) is a
// server like any other.
func runsTrunk(raw json.RawMessage) bool {
	var e struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	base := strings.TrimSuffix(strings.ToLower(path.Base(strings.ReplaceAll(e.Command, `\`, "/"))), ".exe")
	if base != "mcptrunk" {
		return false
	}
	return len(e.Args) == 0 || (e.Args[0] != "connect" && e.Args[0] != "bridge")
}

// selfNote is the note on a skipped entry that runs mcptrunk itself.
func selfNote(name string) string {
	return fmt.Sprintf("server %q: skipped: it runs mcptrunk itself (the entry \"mcptrunk install\" gives a host), and the trunk does not start itself", name)
}

// resolvePaths makes a server's relative cwd, and a relative command that
// names a path (it contains a separator, such as ./server or bin/server),
// relative to dir, the config file's directory, rather than to wherever
// mcptrunk happens to be started: hosts start it from anywhere. A command
// is resolved against the server's cwd when it has one, as a shell in
// that directory would. A bare command name (npx, node) is looked up in
// PATH as before.
func resolvePaths(s *Spec, dir string) {
	if s.Invalid != nil || s.Type != TransportStdio {
		return
	}
	if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
		s.Cwd = filepath.Join(dir, s.Cwd)
	}
	if hasPathSeparator(s.Command) && !filepath.IsAbs(s.Command) && filepath.VolumeName(s.Command) == "" {
		base := dir
		if s.Cwd != "" {
			base = s.Cwd
		}
		s.Command = filepath.Join(base, s.Command)
	}
}

func hasPathSeparator(cmd string) bool {
	return strings.ContainsRune(cmd, '/') || runtime.GOOS == "windows" && strings.ContainsRune(cmd, '\\')
}
