package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
	"github.com/mcptrunk/mcptrunk/naming"
)

// importCommand reads the MCP servers the hosts (Claude Desktop, Claude
// Code, Cursor, VS Code, Windsurf, Zed, Gemini CLI, Codex) have configured and shows what
// mcptrunk's config would gain; with --write it adds them. Nothing already
// in mcptrunk's config is changed: a name that is taken keeps its entry.
type importCommand struct {
	from    string // a host, a file, or host:file; "" for every host
	project string // the project whose servers count; "" for the current directory
	write   bool
}

func (c *importCommand) flags(fs *flagSet) {
	fs.StringVar(&c.from, "from", "", "a host ("+strings.Join(hostcfg.HostIDs(), ", ")+"), a host's file, or HOST:FILE (default: every host)")
	fs.StringVar(&c.project, "project", "", "the project directory whose servers are read too (default: the current directory)")
	fs.BoolVar(&c.write, "write", false, "add the servers to mcptrunk's config (a backup of it is kept)")
}

func (c *importCommand) run(_ context.Context, env *environment) error {
	sys, err := hostEnv(c.project)
	if err != nil {
		return err
	}
	locs, err := importLocations(c.from, sys)
	if err != nil {
		return err
	}
	cfgPath, err := env.writableConfigPath(sys)
	if err != nil {
		return err
	}
	plan, err := planImport(cfgPath, locs, sys, c.from != "")
	if err != nil {
		return err
	}
	plan.print(env.stdout)
	if c.write && len(plan.add) > 0 {
		if err := plan.writeConfig(env.stdout); err != nil {
			return err
		}
	} else if len(plan.add) > 0 {
		fmt.Fprintf(env.stdout, "Run again with --write to add %s to %s.\n", map[bool]string{true: "it", false: "them"}[len(plan.add) == 1], cfgPath)
	}
	if plan.unreadable > 0 {
		return exitError(1)
	}
	return nil
}

// hostEnv is the system the hosts' paths and variables are taken from.
func hostEnv(project string) (hostcfg.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return hostcfg.Env{}, fmt.Errorf("no home directory, where the hosts keep their settings: %w", err)
	}
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return hostcfg.Env{}, err
		}
	}
	if project, err = filepath.Abs(project); err != nil {
		return hostcfg.Env{}, err
	}
	return hostcfg.Env{GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv, Project: project}, nil
}

// importLocations lists the files --from names: every host's, one host's,
// or one file (in the format its name or a HOST: prefix says).
func importLocations(from string, sys hostcfg.Env) ([]hostcfg.Location, error) {
	if from == "" {
		var out []hostcfg.Location
		for _, h := range hostcfg.Hosts {
			out = append(out, hostcfg.Locations(h, sys)...)
		}
		return out, nil
	}
	if h, err := hostcfg.HostByID(from); err == nil {
		return hostcfg.Locations(h, sys), nil
	}
	var host *hostcfg.Host
	path := from
	if id, rest, ok := strings.Cut(from, ":"); ok {
		if h, err := hostcfg.HostByID(id); err == nil {
			host, path = h, rest
		}
	}
	if host == nil {
		if host = hostcfg.GuessHost(path); host == nil {
			return nil, fmt.Errorf("--from %s: neither a host (%s) nor a file whose name says which host's it is; write HOST:%s",
				from, strings.Join(hostcfg.HostIDs(), ", "), from)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return []hostcfg.Location{fileLocation(host, abs)}, nil
}

// fileLocation is a file named on the command line: a project's when it
// lies in one (.mcp.json, .vscode/, .cursor/, .zed/), so that
// ${workspaceFolder} has a value.
func fileLocation(host *hostcfg.Host, path string) hostcfg.Location {
	loc := hostcfg.Location{Host: host, Path: path, Scope: hostcfg.ScopeUser}
	dir := filepath.Dir(path)
	switch {
	case filepath.Base(path) == ".mcp.json":
		loc.Scope, loc.Project = hostcfg.ScopeProject, dir
	case filepath.Base(dir) == ".vscode" || filepath.Base(dir) == ".cursor" || filepath.Base(dir) == ".zed":
		loc.Scope, loc.Project = hostcfg.ScopeProject, filepath.Dir(dir)
	}
	return loc
}

// writableConfigPath is the mcptrunk config that import and install write:
// the one --config, $MCPTRUNK_CONFIG or the usual places find, or, when
// there is none yet, $XDG_CONFIG_HOME/mcptrunk/config.json (a path that
// does not depend on the directory a host starts mcptrunk in). Always
// absolute: a host runs mcptrunk with it.
func (e *environment) writableConfigPath(sys hostcfg.Env) (string, error) {
	p, err := e.configPath()
	if err != nil {
		base := os.Getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(base) {
			base = filepath.Join(sys.Home, ".config")
		}
		p = filepath.Join(base, "mcptrunk", "config.json")
	}
	return filepath.Abs(p)
}

// importPlan is what an import found and would do.
type importPlan struct {
	cfgPath    string
	cfg        []byte // the config's bytes; nil when it does not exist yet
	files      []importedFile
	add        []hostcfg.Server
	unreadable int // files that exist but cannot be read or parsed
}

// importedFile is one host file and what became of each of its servers.
type importedFile struct {
	loc     hostcfg.Location
	missing bool
	err     error
	servers []importedServer
}

// importedServer is one entry and its fate.
type importedServer struct {
	hostcfg.Server
	outcome outcome
	why     string // for set aside, same and clash
}

type outcome int

const (
	outAdd     outcome = iota
	outSame            // mcptrunk's config (or a host read before) already has it, the same
	outClash           // the name is taken by a different entry, which is kept
	outRefused         // mcptrunk cannot express it
	outSelf            // it runs mcptrunk
)

// planImport reads every location and decides, server by server, what the
// config at cfgPath gains. A config that exists but does not parse is an
// error: nothing is added to a file mcptrunk cannot read. showMissing: say
// so of a file that does not exist (one asked for by name).
func planImport(cfgPath string, locs []hostcfg.Location, sys hostcfg.Env, showMissing bool) (*importPlan, error) {
	plan := &importPlan{cfgPath: cfgPath}
	data, err := os.ReadFile(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := hostcfg.ValidateConfig(data, os.LookupEnv); err != nil {
			return nil, fmt.Errorf("mcptrunk's config %s does not parse; nothing is added to it until it does:\n%w", cfgPath, err)
		}
		plan.cfg = data
	}
	existing, err := hostcfg.ConfigServers(plan.cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfgPath, err)
	}
	ids := map[string]string{} // server id → what holds it, for names that normalise alike
	for name := range existing {
		if id, err := naming.ServerID(name); err == nil {
			ids[id] = "mcptrunk's config"
		}
	}
	planned := map[string]hostcfg.Server{}
	for _, loc := range locs {
		f := importedFile{loc: loc}
		servers, err := hostcfg.ReadFile(loc, os.ReadFile, sys)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.missing = true
			if !showMissing {
				continue
			}
		case err != nil:
			f.err = err
			plan.unreadable++
		}
		for _, s := range servers {
			is := importedServer{Server: s}
			id, _ := naming.ServerID(s.Name)
			switch prev, dup := planned[s.Name]; {
			case s.Self:
				is.outcome = outSelf
			case s.Problem != "":
				is.outcome, is.why = outRefused, s.Problem
			case existing[s.Name] != nil && hostcfg.SameEntry(existing[s.Name], s.Entry):
				is.outcome, is.why = outSame, "already in mcptrunk's config"
			case existing[s.Name] != nil:
				is.outcome, is.why = outClash, "mcptrunk's config has a different entry of this name; it is kept"
			case dup && hostcfg.SameEntry(prev.Entry, s.Entry):
				is.outcome, is.why = outSame, "the same as in "+describe(prev.From)
			case dup:
				is.outcome, is.why = outClash, "a different entry of this name comes from "+describe(prev.From)+"; that one is kept"
			case ids[id] != "":
				is.outcome, is.why = outClash, fmt.Sprintf("its name becomes %q in tool names, as a server's in %s does; that one is kept", id, ids[id])
			default:
				planned[s.Name] = s
				ids[id] = describe(loc)
				plan.add = append(plan.add, s)
			}
			f.servers = append(f.servers, is)
		}
		plan.files = append(plan.files, f)
	}
	return plan, nil
}

// describe names a location for the report: the host, the scope and the
// file.
func describe(loc hostcfg.Location) string {
	return fmt.Sprintf("%s (%s) %s", loc.Host.Name, loc.Scope, loc.Path)
}

// print writes the report: per file, each server with its type and command
// or URL (never an env or header value), what is added and what is not,
// and why.
func (p *importPlan) print(w io.Writer) {
	fmt.Fprintf(w, "mcptrunk config: %s%s\n", p.cfgPath, map[bool]string{true: " (new)", false: ""}[p.cfg == nil])
	refused := 0
	for _, f := range p.files {
		fmt.Fprintf(w, "\n%s\n", describe(f.loc))
		switch {
		case f.missing:
			fmt.Fprintln(w, "  no such file")
		case f.err != nil:
			fmt.Fprintf(w, "  not read: %v\n", f.err)
		case len(f.servers) == 0:
			fmt.Fprintln(w, "  no servers")
		}
		for _, s := range f.servers {
			where := s.Command
			if s.Type != "stdio" {
				where = s.URL
			}
			if s.Disabled {
				where += " (disabled)"
			}
			switch s.outcome {
			case outAdd:
				fmt.Fprintf(w, "  + %-16s %-5s %s\n", s.Name, s.Type, where)
				for _, n := range s.Notes {
					fmt.Fprintf(w, "      note: %s\n", n)
				}
			case outSame:
				fmt.Fprintf(w, "  = %-16s %s\n", s.Name, s.why)
			case outClash:
				fmt.Fprintf(w, "  ~ %-16s not added: %s\n", s.Name, s.why)
			case outRefused:
				refused++
				fmt.Fprintf(w, "  - %-16s cannot be carried over: %s\n", s.Name, s.why)
			case outSelf:
				fmt.Fprintf(w, "  . %-16s runs mcptrunk itself; not imported\n", s.Name)
			}
		}
	}
	fmt.Fprintf(w, "\n%s to add", plural(len(p.add), "server", "servers"))
	if refused > 0 {
		fmt.Fprintf(w, ", %d that mcptrunk cannot express (-)", refused)
	}
	fmt.Fprintln(w, ".")
}

// writeConfig adds the planned servers to mcptrunk's config: a backup of
// the file first, the new file written atomically, then read back and
// validated as mcptrunk will read it. When that fails the old file is put
// back, and the error says why.
func (p *importPlan) writeConfig(w io.Writer) error {
	out, err := hostcfg.MergeServers(p.cfg, p.add)
	if err != nil {
		return fmt.Errorf("%s: %w", p.cfgPath, err)
	}
	backup := ""
	if p.cfg != nil {
		backup = fmt.Sprintf("%s.bak-%s", p.cfgPath, time.Now().Format("20060102-150405.000"))
		if err := hostcfg.WriteNew(backup, p.cfg); err != nil {
			return fmt.Errorf("backing up mcptrunk's config: %w", err)
		}
	}
	// A new config may hold the hosts' tokens: readable by the user only.
	if err := hostcfg.WriteAtomic(p.cfgPath, out, 0o600); err != nil {
		return err
	}
	written, err := os.ReadFile(p.cfgPath)
	if err == nil {
		err = hostcfg.ValidateConfig(written, os.LookupEnv)
	}
	if err != nil {
		if p.cfg == nil {
			os.Remove(p.cfgPath)
		} else if rerr := hostcfg.WriteAtomic(p.cfgPath, p.cfg, 0o600); rerr != nil {
			return fmt.Errorf("the new config does not validate (%v), and putting the old one back failed: %w; it is in %s", err, rerr, backup)
		}
		return fmt.Errorf("the new config does not validate, so %s was left as it was:\n%w", p.cfgPath, err)
	}
	if backup != "" {
		fmt.Fprintf(w, "Backed up %s to %s.\n", p.cfgPath, backup)
	}
	fmt.Fprintf(w, "Added %s to %s.\n", plural(len(p.add), "server", "servers"), p.cfgPath)
	return nil
}
