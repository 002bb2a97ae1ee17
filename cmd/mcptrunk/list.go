package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/textview"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// listCommand prints the namespaced catalog and each server's status.
type listCommand struct {
	json   bool
	asHost bool
}

func (c *listCommand) flags(fs *flagSet) {
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	fs.BoolVar(&c.asHost, "as-host", false, "connect the servers as a host that can sample, elicit and give roots: some servers offer such hosts more tools")
}

// capableHost are the capabilities list --as-host declares: all the trunk
// passes on to servers (sampling, elicitation, roots), as the most
// capable host does.
var capableHost = json.RawMessage(`{"elicitation":{},"roots":{},"sampling":{}}`)

// listSections are the catalog's lists, in the order printed.
var listSections = []struct{ title, method, field string }{
	{"Tools", "tools/list", "tools"},
	{"Prompts", "prompts/list", "prompts"},
	{"Resources", "resources/list", "resources"},
	{"Resource templates", "resources/templates/list", "resourceTemplates"},
}

func (c *listCommand) run(ctx context.Context, env *environment) error {
	var trunkOpts config.TrunkOptions // the config's, for the overrides' lines
	o := oneShot{pick: func(cfg *config.Config) []config.Spec { trunkOpts = cfg.Trunk; return cfg.Servers }}
	if c.asHost {
		o.caps = capableHost
	}
	t, err := env.startTrunk(ctx, o)
	if err != nil {
		return err
	}
	defer t.Close(context.WithoutCancel(ctx))

	lists := map[string][]json.RawMessage{}
	for _, s := range listSections {
		res, err := t.HandleOneShot(ctx, s.method, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", s.method, err)
		}
		var page map[string][]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return fmt.Errorf("%s: %w", s.method, err)
		}
		lists[s.field] = page[s.field]
	}
	statuses := serverStatuses(t)
	servers := catalog.ServersOf(t.Fleet().Clients())
	overrides := catalog.OverrideLines(catalog.PolicyOf(trunkOpts), servers)
	overrides = append(overrides, catalog.ProfileOverrideLines(catalog.PolicyOf(trunkOpts), servers, trunkOpts.ProfileOverrides)...)
	if c.json {
		return textview.JSON(env.stdout, map[string]any{"servers": statuses, "lists": lists, "overrides": overrides})
	}
	textview.StatusTable(env.stdout, statuses)
	for _, s := range listSections {
		textview.Items(env.stdout, s.title, lists[s.field])
	}
	if len(overrides) > 0 {
		fmt.Fprintln(env.stdout)
		for _, line := range overrides {
			fmt.Fprintln(env.stdout, line)
		}
	}
	return nil
}

func serverStatuses(t *proxy.Trunk) []upstream.Status {
	var out []upstream.Status
	for _, c := range t.Fleet().Clients() {
		out = append(out, c.Status())
	}
	return out
}
