package hostcfg

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// SelfName is the name of the entry Install gives a host for mcptrunk:
// short, because Claude Code puts it in every tool name
// (mcp__trunk__mcp__notes__search).
const SelfName = "trunk"

// BackupPath is where Install keeps a host file's bytes as they were, and
// where Uninstall finds them. One fixed name: a second Install would find
// it and refuse, rather than back up a file that already runs mcptrunk.
func BackupPath(hostFile string) string { return hostFile + ".mcptrunk-backup" }

// Installable says whether Install can edit loc: the servers must be a
// top-level member of their file. Claude Code's local scope, nested in
// ~/.claude.json under projects, is not.
func Installable(loc Location) error {
	if loc.Scope == ScopeLocal {
		return fmt.Errorf("%s: %s's local-scope servers (projects[%q].mcpServers) are nested in its state; install edits the user scope (the top-level mcpServers) or a project's .mcp.json", loc.Path, loc.Host.Name, loc.Project)
	}
	return nil
}

// InstallEdit returns a host file's data with its servers replaced: first
// the entry named name that runs command with args, then the entries
// named in keep (those mcptrunk did not take over), with their bytes as
// they were. Only the servers member changes; a file without one gets one
// at the end.
func InstallEdit(loc Location, data []byte, name, command string, args []string, keep []string) ([]byte, error) {
	if err := Installable(loc); err != nil {
		return nil, err
	}
	if loc.Host.toml() {
		return codexInstallEdit(loc, data, name, command, args, keep)
	}
	p, err := plain(loc.Host, data)
	if err == nil {
		_, err = serversOf(loc, p) // refuse what does not parse, servers included
	}
	if err != nil {
		return nil, &ParseError{Host: loc.Host, Path: loc.Path, Err: err}
	}
	self, _ := json.Marshal(loc.Host.entry(command, args))
	ms := []rawMember{{key: name, value: self, encoded: true}}
	old, err := serverSpans(loc, p)
	if err != nil {
		return nil, err
	}
	for _, k := range keep {
		for _, s := range old {
			if s.key == k && k != name {
				ms = append(ms, rawMember{key: k, value: data[s.valueStart:s.valueEnd]})
			}
		}
	}
	l := layoutOf(p)
	return setMember(data, p, loc.Host.Key, func(indent string) []byte { return l.formatObject(ms, indent) })
}

// serverSpans finds the entries of the servers member in p, none when the
// file has no servers member.
func serverSpans(loc Location, p []byte) ([]span, error) {
	s, ok, err := objectMember(p, loc.Host.Key)
	if err != nil || !ok {
		return nil, err
	}
	return memberSpans(p, s.valueStart, s.valueEnd)
}

// ReadToInstall reads loc's file for Install: refused when an Install's
// backup is already beside it (the file runs mcptrunk already) or when it
// does not parse, both before anything is written. A file that does not
// exist yet reads as an empty one of the host's format (created: true),
// which Install then writes and backs up, so that uninstall leaves the
// host a file with no servers.
func ReadToInstall(loc Location, sys Env) (data []byte, created bool, err error) {
	backup := BackupPath(loc.Path)
	if _, err := os.Lstat(backup); err == nil {
		return nil, false, fmt.Errorf("%s: already installed: the backup of %s's file is at %s; run \"mcptrunk uninstall --host %s\" first",
			loc.Path, loc.Host.Name, backup, loc.Host.ID)
	}
	data, err = os.ReadFile(loc.Path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := Installable(loc); err != nil {
			return nil, false, err
		}
		if loc.Host.toml() {
			return []byte{}, true, nil
		}
		return []byte("{}\n"), true, nil
	} else if err != nil {
		return nil, false, err
	}
	if _, err := Read(loc, data, sys); err != nil {
		return nil, false, err
	}
	return data, false, nil
}

// Install gives the host of loc, whose file holds data, the entry name
// running command with args in place of its servers but those in keep
// (InstallEdit), after backing data up byte for byte (BackupPath). It
// returns what it wrote. When the write fails the backup goes too: the
// file is as it was, with nothing to uninstall.
func Install(loc Location, data []byte, name, command string, args, keep []string) ([]byte, error) {
	out, err := InstallEdit(loc, data, name, command, args, keep)
	if err != nil {
		return nil, err
	}
	backup := BackupPath(loc.Path)
	if err := os.MkdirAll(filepath.Dir(loc.Path), 0o755); err != nil {
		return nil, err
	}
	if err := WriteNew(backup, data); err != nil {
		return nil, fmt.Errorf("backing up %s's file: %w", loc.Host.Name, err)
	}
	if err := WriteAtomic(loc.Path, out, 0o600); err != nil {
		os.Remove(backup)
		return nil, err
	}
	return out, nil
}

// PrintUnusable says which servers of the config at cfgPath will not
// start, and why (a variable not set here, most often), while the others
// serve. The environment is this process's: the host may start mcptrunk
// with another, hence the advice.
func PrintUnusable(w io.Writer, cfgPath, hostName string) {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return // the plan was validated; a file that fails now says so at serve
	}
	var lines []string
	for _, s := range cfg.Servers {
		if s.Invalid != nil && !s.Disabled {
			for _, p := range s.Invalid.Problems {
				lines = append(lines, fmt.Sprintf("  %s: %v", s.Name, p))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nThese servers will not start until what follows is fixed (set the variable where %s starts mcptrunk, or in the config's env); the others serve meanwhile:\n%s\n",
		hostName, strings.Join(lines, "\n"))
}
