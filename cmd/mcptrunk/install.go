package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
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
		return fmt.Errorf("%s: --host is required (one of: %s)", verb, strings.Join(hostcfg.HostIDs(), ", "))
	}
	host, err := hostcfg.HostByID(c.host)
	if err != nil {
		return err
	}
	sys, err := hostEnv(c.project)
	if err != nil {
		return err
	}
	loc, err := installLocation(host, hostcfg.Scope(c.scope), sys)
	if err != nil {
		return err
	}
	if c.undo {
		return uninstall(env, loc)
	}
	return install(env, loc, sys)
}

// installLocation is the file of host's servers in scope.
func installLocation(host *hostcfg.Host, scope hostcfg.Scope, sys hostcfg.Env) (hostcfg.Location, error) {
	if scope != hostcfg.ScopeUser && scope != hostcfg.ScopeProject {
		return hostcfg.Location{}, fmt.Errorf("--scope %s: want user or project", scope)
	}
	for _, loc := range hostcfg.Locations(host, sys) {
		if loc.Scope == scope {
			return loc, nil
		}
	}
	return hostcfg.Location{}, fmt.Errorf("%s has no %s-scope file", host.Name, scope)
}

func install(env *environment, loc hostcfg.Location, sys hostcfg.Env) error {
	backup := hostcfg.BackupPath(loc.Path)
	if _, err := os.Lstat(backup); err == nil {
		return fmt.Errorf("%s: already installed: the backup of %s's file is at %s; run \"mcptrunk uninstall --host %s\" first",
			loc.Path, loc.Host.Name, backup, loc.Host.ID)
	}
	data, err := os.ReadFile(loc.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such file: %s keeps no servers there yet; add mcptrunk to it by hand (see README, \"Plug it into a host\")", loc.Path, loc.Host.Name)
	} else if err != nil {
		return err
	}
	// Refuse a host file that does not parse before anything is written.
	if _, err := hostcfg.Read(loc, data, sys); err != nil {
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
	out, err := hostcfg.InstallEdit(loc, data, name, self, installArgs(loc.Host, name, cfgPath), keep)
	if err != nil {
		return err
	}
	if err := hostcfg.WriteNew(backup, data); err != nil {
		return fmt.Errorf("backing up %s's file: %w", loc.Host.Name, err)
	}
	if err := hostcfg.WriteAtomic(loc.Path, out, 0o600); err != nil {
		os.Remove(backup) // the file is as it was: nothing to uninstall
		return err
	}
	fmt.Fprintf(env.stdout, "\n%s now starts mcptrunk (%q in %s): %s %s\n", loc.Host.Name, name, loc.Path, self, strings.Join(installArgs(loc.Host, name, cfgPath), " "))
	if len(keep) > 0 {
		fmt.Fprintf(env.stdout, "Left in %s's file, beside it: %s.\n", loc.Host.Name, strings.Join(keep, ", "))
	}
	fmt.Fprintf(env.stdout, "Its file as it was is in %s. Restart %s to use it; undo with \"mcptrunk uninstall --host %s\".\n",
		backup, loc.Host.Name, loc.Host.ID)
	for _, a := range hostcfg.InstallAdvice(loc, out, name) {
		fmt.Fprintf(env.stdout, "Note: %s.\n", a)
	}
	printUnusable(env.stdout, cfgPath, loc.Host.Name)
	return nil
}

// printUnusable says which servers of the config will not start, and why
// (a variable not set here, most often), while the others serve. The
// environment is this shell's: the host may start mcptrunk with another.
func printUnusable(w io.Writer, cfgPath, hostName string) {
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

// uninstall puts the host's file back from the backup install kept,
// merged with what the host's file gained since (hostcfg.UninstallEdit),
// and removes the backup, or keeps it under a new name when it holds
// entries the file no longer does. The servers install added to
// mcptrunk's config stay there.
func uninstall(env *environment, loc hostcfg.Location) error {
	backup := hostcfg.BackupPath(loc.Path)
	saved, err := os.ReadFile(backup)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: not installed: there is no backup at %s", loc.Path, backup)
	} else if err != nil {
		return err
	}
	current, err := os.ReadFile(loc.Path)
	u := hostcfg.Uninstalled{Data: saved, Exact: true}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if u, err = hostcfg.UninstallEdit(loc, current, saved); err != nil {
			return err
		}
	}
	if err := hostcfg.WriteAtomic(loc.Path, u.Data, 0o600); err != nil {
		return err
	}
	kept := ""
	if len(u.Changed) > 0 {
		if kept, err = hostcfg.KeepBackup(loc.Path, time.Now()); err != nil {
			return fmt.Errorf("keeping the backup of %s's file: %w", loc.Host.Name, err)
		}
	} else if err := os.Remove(backup); err != nil {
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
			strings.Join(u.Changed, ", "), kept)
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
