package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy"
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
	var o oneShot
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
	if c.json {
		return printJSON(env.stdout, map[string]any{"servers": statuses, "lists": lists})
	}
	printStatusTable(env.stdout, statuses)
	for _, s := range listSections {
		printItems(env.stdout, s.title, lists[s.field])
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

// printStatusTable prints one line per server. APPS counts its MCP Apps
// (ui:// resources), CATALOG says where the counts come from, USED the
// time since its last request ("-": none).
func printStatusTable(w io.Writer, statuses []upstream.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\tPROMPTS\tRESOURCES\tTEMPLATES\tAPPS\tCATALOG\tUSED\tERROR")
	for _, s := range statuses {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", s.Server, s.State, s.Tools, s.Prompts, s.Resources, s.Templates, s.Apps,
			catalogSource(s), ago(s.LastUse), firstLine(s.Error))
	}
	tw.Flush()
}

// catalogSource says where a server's catalog comes from: "live" when the
// server is running and listed it itself (however old the cache entry it
// matches: a server that just started is not listed from the cache),
// "cached <age>" when a sleeping server is listed from the catalog cache,
// "-" when it has none.
func catalogSource(s upstream.Status) string {
	switch {
	case s.State == upstream.StateReady:
		return "live"
	case s.State == upstream.StateSleeping && !s.CachedAt.IsZero():
		return "cached " + ago(s.CachedAt)
	}
	return "-"
}

// ago says how long ago t was, coarsely ("-" for the zero time).
func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String() + " ago"
	case d < time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s") + " ago"
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Hour).String(), "0m0s") + " ago"
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// printItems prints one list: each item's exported name or URI and a short
// description.
func printItems(w io.Writer, title string, items []json.RawMessage) {
	fmt.Fprintf(w, "\n%s (%d)\n", title, len(items))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, raw := range items {
		var it struct {
			Name, Title, Description, URI, URITemplate string
		}
		_ = json.Unmarshal(raw, &it)
		id := it.Name
		if it.URI != "" {
			id = it.URI
		} else if it.URITemplate != "" {
			id = it.URITemplate
		}
		about := it.Title
		if about == "" {
			about = it.Description
		}
		fmt.Fprintf(tw, "  %s\t%s\n", id, truncate(firstLine(about), 70))
	}
	tw.Flush()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
