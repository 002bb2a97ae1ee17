package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
)

// installCommand moves a host's servers into mcptrunk's config and gives
// the host one server instead, mcptrunk; uninstall (the same type, undo
// set) puts the host's file back as it was. The host's file is backed up
// byte for byte beside it, and only its servers member is edited.
type installCommand struct {
	undo    bool
	host    string
	scope   string
	project string
}

func (c *installCommand) flags(fs *flagSet) {
	fs.StringVar(&c.host, "host", "", "the host: "+strings.Join(hostcfg.HostIDs(), ", "))
	fs.StringVar(&c.scope, "scope", "user", "which of the host's files: user, or project (Claude Code's .mcp.json, .cursor/, .vscode/ or .zed/ of --project)")
	fs.StringVar(&c.project, "project", "", "the project directory, for --scope project (default: the current directory)")
}

func (c *installCommand) run(_ context.Context, env *environment) error {
	verb := map[bool]string{false: "install", true: "uninstall"}[c.undo]
	if c.host == "" {
		return usagef("%s: --host is required (one of: %s)", verb, strings.Join(hostcfg.HostIDs(), ", "))
	}
	host, err := hostcfg.HostByID(c.host)
	if err != nil {
		return usagef("--host: %v", err)
	}
	sys, err := hostcfg.SystemEnv(c.project)
	if err != nil {
		return err
	}
	if c.scope != string(hostcfg.ScopeUser) && c.scope != string(hostcfg.ScopeProject) {
		return usagef("--scope %s: want user or project", c.scope)
	}
	loc, err := hostcfg.ScopeLocation(host, hostcfg.Scope(c.scope), sys)
	if err != nil {
		return err
	}
	if c.undo {
		return uninstall(env, loc)
	}
	return install(env, loc, sys)
}

func install(env *environment, loc hostcfg.Location, sys hostcfg.Env) error {
	data, created, err := hostcfg.ReadToInstall(loc, sys)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return fmt.Errorf("cannot tell where this mcptrunk binary is, which %s would start: %w", loc.Host.Name, err)
	}
	cfgPath, err := env.writableConfigPath(sys)
	if err != nil {
		return err
	}

	plan, err := hostcfg.PlanImport(cfgPath, []hostcfg.Location{loc}, sys, true)
	if err != nil {
		return err
	}
	plan.Print(env.stdout)
	if len(plan.Add) > 0 {
		if err := plan.WriteConfig(env.stdout); err != nil {
			return err
		}
	} else if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
		// The host will start mcptrunk with this config: it must exist,
		// if only to be added to.
		empty, err := hostcfg.MergeServers(nil, nil)
		if err == nil {
			err = hostcfg.EditConfig(env.stdout, cfgPath, nil, empty)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "Created %s with no servers yet; add one with mcptrunk add NAME -- COMMAND [ARGS...].\n", cfgPath)
	}
	// The host keeps what mcptrunk did not take: entries it cannot express,
	// and those whose name another entry holds in mcptrunk's config. No
	// server is lost; only those mcptrunk now runs, and older entries
	// that run mcptrunk, leave the host's file.
	keep := plan.NotTaken()
	name := hostcfg.SelfName
	if slices.Contains(keep, name) {
		name = "mcptrunk"
	}
	out, err := hostcfg.Install(loc, data, name, self, installArgs(loc.Host, name, cfgPath), keep)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(env.stdout, "\n%s had no %s; it was created.", loc.Host.Name, loc.Path)
	}
	fmt.Fprintf(env.stdout, "\n%s now starts mcptrunk (%q in %s): %s %s\n", loc.Host.Name, name, loc.Path, self, strings.Join(installArgs(loc.Host, name, cfgPath), " "))
	if len(keep) > 0 {
		fmt.Fprintf(env.stdout, "Left in %s's file, beside it: %s.\n", loc.Host.Name, strings.Join(keep, ", "))
	}
	fmt.Fprintf(env.stdout, "Its file as it was is in %s. Restart %s to use it; undo with \"mcptrunk uninstall --host %s\".\n",
		hostcfg.BackupPath(loc.Path), loc.Host.Name, loc.Host.ID)
	for _, a := range hostcfg.InstallAdvice(loc, out, name) {
		fmt.Fprintf(env.stdout, "Note: %s.\n", a)
	}
	hostcfg.PrintUnusable(env.stdout, cfgPath, loc.Host.Name)
	return nil
}

// uninstall puts the host's file back (hostcfg.Uninstall) and says what
// it kept of the host's changes since install.
func uninstall(env *environment, loc hostcfg.Location) error {
	u, err := hostcfg.Uninstall(loc, time.Now())
	if err != nil {
		return err
	}
	if u.Exact {
		fmt.Fprintf(env.stdout, "Restored %s as it was before install.\n", loc.Path)
	} else {
		fmt.Fprintf(env.stdout, "Restored the %q of %s from before install, merged with what %s changed since, which was kept.\n",
			loc.Host.Key, loc.Path, loc.Host.Name)
	}
	if len(u.Added) > 0 {
		fmt.Fprintf(env.stdout, "Kept %s added since install: %s.\n", plural(len(u.Added), "server", "servers"), strings.Join(u.Added, ", "))
	}
	if len(u.Changed) > 0 {
		// The entries from before install are in the backup kept.
		fmt.Fprintf(env.stdout, "Kept the current entry of %s, changed since install; the file from before install, with the earlier entry, is kept in %s.\n",
			strings.Join(u.Changed, ", "), u.Kept)
	}
	fmt.Fprintf(env.stdout, "Restart %s to use it. The servers install moved stay in mcptrunk's config.\n", loc.Host.Name)
	return nil
}

// installArgs are the arguments of the entry install gives a host: serve
// the config, and, for a host that puts a prefix before the trunk's tool
// names, that prefix, so that names fit the host's model (fitHostPrefix).
func installArgs(host *hostcfg.Host, name, cfgPath string) []string {
	args := []string{"serve", "--config", cfgPath}
	if p := host.ToolPrefix(name); p != "" {
		args = append(args, "--host-prefix", p)
	}
	return args
}
