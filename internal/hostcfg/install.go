package hostcfg

import (
	"encoding/json"
	"fmt"
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
