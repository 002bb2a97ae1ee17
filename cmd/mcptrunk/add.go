package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
	"github.com/mcptrunk/mcptrunk/internal/registry"
	"github.com/mcptrunk/mcptrunk/naming"
)

// addCommand adds a server to mcptrunk's config: one that runs a command
// (add NAME -- COMMAND [ARGS...]), a remote one (add NAME --url URL), or
// one of the MCP registry (add NAME[@VERSION]). Every form writes as
// import does (hostcfg.EditConfig): a backup, the other bytes kept.
type addCommand struct {
	registry string
	name     string
	dryRun   bool
	url      string
	env      stringsFlag
	headers  headerFlags
}

func (c *addCommand) flags(fs *flagSet) {
	fs.StringVar(&c.url, "url", "", "add a remote server: its streamable HTTP `URL`")
	fs.Var(&c.env, "env", "an environment variable for the command, `NAME=value` (repeatable); ${VAR} in the value is read when the server starts")
	fs.Var(&c.headers, "header", "a header for the remote server, `\"Name: value\"` or Name=value (repeatable); ${VAR} in the value is read when the server starts")
	fs.StringVar(&c.registry, "registry", registry.Official, "the registry's `URL` (its /v0.1 read API)")
	fs.StringVar(&c.name, "name", "", "the server's `NAME` in mcptrunk's config, for a registry server (default: the last part of its registry name)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "show the entry, and write nothing")
}

func (c *addCommand) run(ctx context.Context, env *environment) error {
	switch {
	case env.dash >= 0 && c.url != "":
		return usagef("add: give either a COMMAND after -- or --url, not both")
	case env.dash >= 0 || c.url != "":
		return c.addEntry(env)
	case len(c.env) > 0 || len(c.headers) > 0:
		return usagef("add: --env and --header are for a server added by its command (add NAME -- COMMAND) or --url; a registry server's variables are listed when it is added")
	}
	return c.addFromRegistry(ctx, env)
}

// addEntry adds the server env.args[0] that runs the command after "--",
// or the remote server of --url.
func (c *addCommand) addEntry(env *environment) error {
	if c.name != "" {
		return usagef("add: --name is for a registry server; here the name is the first argument")
	}
	name := env.args[0]
	if _, err := naming.ServerID(name); err != nil {
		return usagef("add: %v", err)
	}
	var entry localEntry
	var notes []string
	if c.url != "" {
		if len(c.env) > 0 {
			return usagef("add: --env is for a server that runs a command; a remote server takes --header")
		}
		entry.URL = c.url
		if len(c.headers) > 0 {
			headers, err := c.headers.byName()
			if err != nil {
				return usagef("add: %v", err)
			}
			entry.Headers = headers
		}
	} else {
		if len(c.headers) > 0 {
			return usagef("add: --header is for a remote server (--url); a command takes --env")
		}
		command, args := env.args[env.dash], env.args[env.dash+1:]
		abs, note, err := resolveCommand(command)
		if err != nil {
			return err
		}
		if note != "" {
			notes = append(notes, note)
		}
		entry.Command, entry.Args = abs, args
		if len(c.env) > 0 {
			vars := map[string]string{}
			for i, kv := range c.env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("add: --env #%d: want NAME=value", i+1)
				}
				vars[k] = v
			}
			entry.Env = vars
		}
	}
	raw, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	cfgPath, cfg, err := env.configToAddTo(name, "remove it first with mcptrunk remove "+name+", or choose another name")
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%q:\n  %s\n", name, entryForReport(entry))
	for _, n := range notes {
		fmt.Fprintf(env.stdout, "Note: %s\n", n)
	}
	if c.dryRun {
		fmt.Fprintf(env.stdout, "\nNothing written (--dry-run). Without it the entry is added to %s.\n", cfgPath)
		return nil
	}
	if err := hostcfg.AddPlan(cfgPath, cfg, []hostcfg.Server{{Name: name, Entry: raw}}).WriteConfig(env.stdout); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Try it: mcptrunk list --config %s\n", cfgPath)
	return nil
}

// localEntry is the mcpServers entry add writes for a command or a URL,
// its fields in the order the config's documentation gives them.
type localEntry struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// entryForReport is the entry as add shows it: the values of its env and
// headers, which may be secrets, left out.
func entryForReport(e localEntry) string {
	hide := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		hidden := make(map[string]string, len(m))
		for name := range m {
			hidden[name] = "(given)"
		}
		return hidden
	}
	e.Env, e.Headers = hide(e.Env), hide(e.Headers)
	b, _ := json.Marshal(e)
	return string(b)
}

// resolveCommand is the command as the config keeps it: a path (./server,
// bin/server) made absolute, since the config is read from wherever a host
// starts mcptrunk; a bare name (npx, uvx) kept, to be looked up in PATH
// when the server starts. A path to no file is refused; a name PATH lacks
// here is noted (the host may start mcptrunk with another PATH).
func resolveCommand(command string) (string, string, error) {
	if !strings.ContainsRune(command, '/') && !strings.ContainsRune(command, filepath.Separator) {
		if _, err := exec.LookPath(command); err != nil {
			return command, fmt.Sprintf("%q is not in PATH here; it must be in the PATH mcptrunk starts with (or give its full path)", command), nil
		}
		return command, "", nil
	}
	abs, err := filepath.Abs(command)
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("add: %s: no such file", abs)
	} else if err != nil {
		return "", "", fmt.Errorf("add: %w", err)
	}
	return abs, "", nil
}

// configToAddTo finds the config a server called id is added to, and its
// bytes (nil when it does not exist yet). A name the config has already is
// an error that ends in advice.
func (e *environment) configToAddTo(id, advice string) (string, []byte, error) {
	sys, err := hostcfg.SystemEnv("")
	if err != nil {
		return "", nil, err
	}
	cfgPath, err := e.writableConfigPath(sys)
	if err != nil {
		return "", nil, err
	}
	cfg, err := os.ReadFile(cfgPath)
	if err != nil && !os.IsNotExist(err) {
		return "", nil, err
	}
	existing, err := hostcfg.ConfigServers(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", cfgPath, err)
	}
	if _, taken := existing[id]; taken {
		return "", nil, fmt.Errorf("%s already has a server named %q: %s", cfgPath, id, advice)
	}
	return cfgPath, cfg, nil
}

// removeCommand removes a server from mcptrunk's config.
type removeCommand struct{}

func (removeCommand) run(_ context.Context, env *environment) error {
	cfgPath, err := env.configPath()
	if err != nil {
		return err
	}
	cfgPath, err = filepath.Abs(cfgPath)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	name := env.args[0]
	out, err := hostcfg.RemoveServer(cfg, name)
	if err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}
	if err := hostcfg.EditConfig(env.stdout, cfgPath, cfg, out); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Removed %q from %s.\n", name, cfgPath)
	return nil
}
