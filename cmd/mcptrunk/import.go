package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	sys, err := hostcfg.SystemEnv(c.project)
	if err != nil {
		return err
	}
	locs, err := hostcfg.LocationsFor(c.from, sys)
	if err != nil {
		return usagef("--from %s: %v", c.from, err)
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
