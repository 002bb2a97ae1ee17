package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
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
	plan, err := hostcfg.PlanImport(cfgPath, locs, sys, c.from != "")
	if err != nil {
		return err
	}
	plan.Print(env.stdout)
	if c.write && len(plan.Add) > 0 {
		if err := plan.WriteConfig(env.stdout); err != nil {
			return err
		}
	} else if len(plan.Add) > 0 {
		fmt.Fprintf(env.stdout, "Run again with --write to add %s to %s.\n", map[bool]string{true: "it", false: "them"}[len(plan.Add) == 1], cfgPath)
	}
	if plan.Unreadable > 0 {
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
