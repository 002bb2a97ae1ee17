package hostcfg

import (
	"fmt"
	"path"
	"strings"

	"github.com/mcptrunk/mcptrunk/naming"
)

// Host is one MCP host whose config files this package reads and edits.
type Host struct {
	ID   string // as the command line names it: "claude-desktop"
	Name string // as people do: "Claude Desktop"
	// Key is the top-level member that holds the servers, an object of
	// name → entry.
	Key string
	// vars is how the host writes variable references in its entries.
	vars dialect
	// entry is the entry Install writes for mcptrunk itself.
	entry func(command string, args []string) selfEntry
	// prefix is what the host puts before the tool names of a server it
	// calls name, as its model is offered them ("" when it puts nothing,
	// or when that is not known).
	prefix func(name string) string
}

// ToolPrefix is what the host puts before each tool name of the server
// it knows as name, as its model is offered them: Claude Code and Codex
// offer mcp__<name>__<tool>, Gemini CLI mcp_<name>_<tool>. "" when the
// host adds nothing, or when that is not known.
func (h *Host) ToolPrefix(name string) string {
	if h.prefix == nil {
		return ""
	}
	return h.prefix(name)
}

// prefixOf is the prefix the host whose clientInfo name is client puts
// before a server's tools (naming.HostOf): one table for install's
// --host-prefix and the trunk's own fitting.
func prefixOf(client string) func(name string) string {
	h, ok := naming.HostOf(client)
	if !ok {
		panic("hostcfg: no naming convention for " + client)
	}
	return h.Prefix
}

// Hosts, in the order import reads them: when two hosts have a server of
// the same name, the first one read is kept.
var Hosts = []*Host{
	{ID: "claude-desktop", Name: "Claude Desktop", Key: "mcpServers", vars: literalVars, entry: commandEntry},
	{ID: "claude-code", Name: "Claude Code", Key: "mcpServers", vars: mcptrunkVars, entry: typedEntry, prefix: prefixOf("claude-code")},
	{ID: "cursor", Name: "Cursor", Key: "mcpServers", vars: cursorVars, entry: commandEntry},
	{ID: "vscode", Name: "VS Code", Key: "servers", vars: vscodeVars, entry: typedEntry},
	{ID: "windsurf", Name: "Windsurf", Key: "mcpServers", vars: windsurfVars, entry: commandEntry},
	{ID: "zed", Name: "Zed", Key: "context_servers", vars: literalVars, entry: commandEntry},
	{ID: "gemini", Name: "Gemini CLI", Key: "mcpServers", vars: geminiVars, entry: commandEntry, prefix: prefixOf("gemini-cli-mcp-client")},
	{ID: "codex", Name: "Codex", Key: "mcp_servers", vars: mcptrunkVars, entry: commandEntry, prefix: prefixOf("codex-mcp-client")},
}

// selfEntry is the entry that starts mcptrunk, its fields in the order the
// hosts' own documentation writes them.
type selfEntry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func commandEntry(command string, args []string) selfEntry {
	return selfEntry{Command: command, Args: args}
}

// typedEntry: Claude Code and VS Code write the type of every entry.
func typedEntry(command string, args []string) selfEntry {
	return selfEntry{Type: "stdio", Command: command, Args: args}
}

// HostByID returns the host the command line names, accepting a few
// spellings ("claude_desktop", "VSCode", "code") and the start of one id
// ("wind"). A start that several ids share ("claude": Claude Desktop and
// Claude Code) is refused naming them: a guess would edit the wrong
// host's file.
func HostByID(id string) (*Host, error) {
	norm := strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(id))
	switch norm {
	case "desktop":
		norm = "claude-desktop"
	case "claudecode":
		norm = "claude-code"
	case "code", "vs-code", "visual-studio-code":
		norm = "vscode"
	case "gemini-cli", "geminicli":
		norm = "gemini"
	case "codex-cli", "openai-codex":
		norm = "codex"
	}
	var starts []*Host
	for _, h := range Hosts {
		if h.ID == norm {
			return h, nil
		}
		if norm != "" && strings.HasPrefix(h.ID, norm) {
			starts = append(starts, h)
		}
	}
	switch len(starts) {
	case 1:
		return starts[0], nil
	case 0:
		return nil, fmt.Errorf("unknown host %q (want one of: %s)", id, strings.Join(HostIDs(), ", "))
	}
	ids := make([]string, len(starts))
	for i, h := range starts {
		ids[i] = fmt.Sprintf("%s (%s)", h.ID, h.Name)
	}
	return nil, &AmbiguousHostError{fmt.Sprintf("host %q could be %s: name one", id, strings.Join(ids, " or "))}
}

// AmbiguousHostError is HostByID's error for a name that starts several
// hosts' ids.
type AmbiguousHostError struct{ msg string }

func (e *AmbiguousHostError) Error() string { return e.msg }

// HostIDs lists the hosts' ids, in order.
func HostIDs() []string {
	ids := make([]string, len(Hosts))
	for i, h := range Hosts {
		ids[i] = h.ID
	}
	return ids
}

// Scope says whose servers a file holds.
type Scope string

const (
	ScopeUser    Scope = "user"    // every project of the user's
	ScopeProject Scope = "project" // one project, in a file inside it
	// ScopeLocal is Claude Code's "local" scope: one project's servers,
	// kept in the user's ~/.claude.json under projects[<dir>].
	ScopeLocal Scope = "local"
)

// Location is one file where a host may keep servers.
type Location struct {
	Host    *Host
	Path    string
	Scope   Scope
	Project string // the project directory, for ScopeProject and ScopeLocal
}

// Env is what Locations needs of the system: the OS (runtime.GOOS), the
// user's home directory, the environment and the project directory (the
// current one, normally; "" for none).
type Env struct {
	GOOS    string
	Home    string
	Getenv  func(string) string
	Project string
}

func (e Env) getenv(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

// join joins path elements with the separator of e.GOOS, whatever OS this
// runs on, so that every OS's paths can be computed (and tested) anywhere.
func (e Env) join(elem ...string) string {
	if e.GOOS != "windows" {
		return path.Join(elem...)
	}
	for i := range elem {
		elem[i] = strings.ReplaceAll(elem[i], `\`, "/")
	}
	return strings.ReplaceAll(path.Join(elem...), "/", `\`)
}

// appData is where per-user application data lives: %APPDATA% on Windows,
// ~/Library/Application Support on macOS, $XDG_CONFIG_HOME (~/.config) on
// Linux and the other Unixes. Electron apps (Claude Desktop, VS Code) keep
// their settings there.
func (e Env) appData() string {
	switch e.GOOS {
	case "windows":
		if d := e.getenv("APPDATA"); d != "" {
			return d
		}
		return e.join(e.Home, "AppData", "Roaming")
	case "darwin":
		return e.join(e.Home, "Library", "Application Support")
	}
	return e.xdgConfig()
}

// xdgConfig is $XDG_CONFIG_HOME, or ~/.config when it is unset or not
// absolute (as the XDG spec says).
func (e Env) xdgConfig() string {
	if d := e.getenv("XDG_CONFIG_HOME"); strings.HasPrefix(d, "/") {
		return d
	}
	return e.join(e.Home, ".config")
}

// Locations lists the files where host keeps servers on e.GOOS, user scope
// first, then the project's when e.Project is set. It is a pure function of
// e: nothing is looked up on disk.
func Locations(host *Host, e Env) []Location {
	user := func(p string) Location { return Location{Host: host, Path: p, Scope: ScopeUser} }
	project := func(p string) Location {
		return Location{Host: host, Path: p, Scope: ScopeProject, Project: e.Project}
	}
	var out []Location
	switch host.ID {
	case "claude-desktop":
		out = append(out, user(e.join(e.appData(), "Claude", "claude_desktop_config.json")))
	case "claude-code":
		// CLAUDE_CONFIG_DIR moves Claude Code's files, ~/.claude.json too.
		file := e.join(e.Home, ".claude.json")
		if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
			file = e.join(d, ".claude.json")
		}
		out = append(out, user(file))
		if e.Project != "" {
			out = append(out, Location{Host: host, Path: file, Scope: ScopeLocal, Project: e.Project},
				project(e.join(e.Project, ".mcp.json")))
		}
	case "cursor":
		out = append(out, user(e.join(e.Home, ".cursor", "mcp.json")))
		if e.Project != "" {
			out = append(out, project(e.join(e.Project, ".cursor", "mcp.json")))
		}
	case "vscode":
		out = append(out, user(e.join(e.appData(), "Code", "User", "mcp.json")))
		if e.Project != "" {
			out = append(out, project(e.join(e.Project, ".vscode", "mcp.json")))
		}
	case "windsurf":
		out = append(out, user(e.join(e.Home, ".codeium", "windsurf", "mcp_config.json")))
	case "zed":
		// Zed reads ~/.config/zed on macOS as on Linux, %APPDATA%\Zed on
		// Windows.
		dir := e.join(e.xdgConfig(), "zed")
		if e.GOOS == "darwin" {
			dir = e.join(e.Home, ".config", "zed")
		} else if e.GOOS == "windows" {
			dir = e.join(e.appData(), "Zed")
		}
		out = append(out, user(e.join(dir, "settings.json")))
		if e.Project != "" {
			out = append(out, project(e.join(e.Project, ".zed", "settings.json")))
		}
	case "codex":
		// CODEX_HOME moves Codex's files, config.toml too.
		dir := e.join(e.Home, ".codex")
		if d := e.getenv("CODEX_HOME"); d != "" {
			dir = d
		}
		out = append(out, user(e.join(dir, "config.toml")))
	case "gemini":
		// ~/.gemini on every OS (%USERPROFILE%\.gemini on Windows).
		out = append(out, user(e.join(e.Home, ".gemini", "settings.json")))
		if e.Project != "" {
			out = append(out, project(e.join(e.Project, ".gemini", "settings.json")))
		}
	}
	return out
}

// GuessHost names the host whose format a file of this path is in, from its
// name and directory, or nil when nothing says.
func GuessHost(p string) *Host {
	p = strings.ReplaceAll(p, `\`, "/")
	base, dir := path.Base(p), path.Base(path.Dir(p))
	id := ""
	switch {
	case base == "claude_desktop_config.json":
		id = "claude-desktop"
	case base == ".claude.json" || base == ".mcp.json":
		id = "claude-code"
	case base == "mcp.json" && dir == ".cursor":
		id = "cursor"
	case base == "mcp.json" && (dir == ".vscode" || dir == "User"):
		id = "vscode"
	case base == "mcp_config.json":
		id = "windsurf"
	case base == "settings.json" && (dir == "zed" || dir == "Zed" || dir == ".zed"):
		id = "zed"
	case base == "settings.json" && dir == ".gemini":
		id = "gemini"
	case base == "config.toml" && dir == ".codex":
		id = "codex"
	}
	h, _ := HostByID(id)
	return h
}
