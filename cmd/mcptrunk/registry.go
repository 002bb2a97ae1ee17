package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
	"github.com/mcptrunk/mcptrunk/internal/registry"
	"github.com/mcptrunk/mcptrunk/internal/textview"
	"github.com/mcptrunk/mcptrunk/naming"
)

// searchCommand lists the registry's servers that match a query.
type searchCommand struct {
	registry string
	limit    int
}

func (c *searchCommand) flags(fs *flagSet) {
	fs.StringVar(&c.registry, "registry", registry.Official, "the registry's `URL` (its /v0.1 read API)")
	fs.IntVar(&c.limit, "limit", 30, "show at most `N` servers")
}

func (c *searchCommand) run(ctx context.Context, env *environment) error {
	if c.limit < 1 {
		return usagef("--limit %d: want 1 or more", c.limit)
	}
	found, more, err := (&registry.Client{Base: c.registry}).SearchUpTo(ctx, env.args[0], c.limit)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		fmt.Fprintf(env.stdout, "No server of %s matches %q.\n", c.registry, env.args[0])
		return nil
	}
	textview.Found(env.stdout, found)
	if more {
		fmt.Fprintf(env.stdout, "\nMore match; show more with --limit, or narrow the search.\n")
	}
	fmt.Fprintf(env.stdout, "\nAdd one with: mcptrunk add NAME[@VERSION]\n")
	return nil
}

// addFromRegistry adds the server of the registry env.args[0] names
// (NAME[@VERSION]).
func (c *addCommand) addFromRegistry(ctx context.Context, env *environment) error {
	ref := env.args[0]
	name, version := ref, ""
	if i := strings.LastIndex(ref, "@"); i > 0 { // registry names hold no @
		name, version = ref[:i], ref[i+1:]
	}
	entry, err := (&registry.Client{Base: c.registry}).Get(ctx, name, version)
	if err != nil {
		return err
	}
	switch entry.Status() {
	case "deleted":
		return fmt.Errorf("%s %s was deleted from the registry; it is not added", name, entry.Server.Version)
	case "deprecated":
		fmt.Fprintf(env.stderr, "Note: %s is deprecated in the registry.\n", name)
	}
	plan, err := registry.PlanEntry(entry.Server)
	if err != nil {
		return err
	}
	id := c.name
	if id == "" {
		id = path.Base(name)
	}
	if id, err = naming.ServerID(id); err != nil {
		return usagef("--name: %v", err)
	}
	raw, _ := json.Marshal(plan.Entry)

	cfgPath, cfg, err := env.configToAddTo(id, "choose another with --name")
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s %s (%s) as %q:\n  %s\n", name, entry.Server.Version, plan.Via, id, raw)
	textview.Variables(env.stdout, plan.Variables)
	if c.dryRun {
		fmt.Fprintf(env.stdout, "\nNothing written (--dry-run). Without it the entry is added to %s.\n", cfgPath)
		return nil
	}
	if err := hostcfg.AddPlan(cfgPath, cfg, []hostcfg.Server{{Name: id, Entry: raw}}).WriteConfig(env.stdout); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Try it: mcptrunk list --config %s\n", cfgPath)
	return nil
}
