// Package textview is what mcptrunk's commands print for a person: the
// table of servers, lists of items, a server's drift from the lockfile,
// registry entries, the hint a bare mcptrunk gives a person at a terminal,
// and the small wording they share (how long ago, a first line). The
// commands keep their flags, wiring and exit codes.
package textview

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/registry"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// StatusTable prints one line per server. APPS counts its MCP Apps
// (ui:// resources), CATALOG says where the counts come from, USED the
// time since its last request ("-": none).
func StatusTable(w io.Writer, statuses []upstream.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\tPROMPTS\tRESOURCES\tTEMPLATES\tAPPS\tCATALOG\tUSED\tERROR")
	for _, s := range statuses {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", s.Server, s.State, s.Tools, s.Prompts, s.Resources, s.Templates, s.Apps,
			catalogSource(s), Ago(s.LastUse), ErrorLine(s.Error))
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
		return "cached " + Ago(s.CachedAt)
	}
	return "-"
}

// ago says how long ago t was, coarsely ("-" for the zero time).
func Ago(t time.Time) string {
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

// Items prints one list: each item's exported name or URI and a short
// description.
func Items(w io.Writer, title string, items []json.RawMessage) {
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
		fmt.Fprintf(tw, "  %s\t%s\n", id, truncate(FirstLine(about), 70))
	}
	tw.Flush()
}

// FirstLine is s up to its first newline.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// truncate cuts s to n runes, the last an ellipsis.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// JSON writes v indented, without escaping HTML.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Found prints one line per server: deprecated and deleted ones
// say so.
func Found(w io.Writer, found []registry.Entry) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tRUNS\tSTATUS\tDESCRIPTION")
	for _, e := range found {
		s := e.Server
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Version, runs(s), e.Status(), FirstLine(s.Description))
	}
	tw.Flush()
}

// runs says how a server would run: its packages' types and its remotes'.
func runs(s registry.Server) string {
	var kinds []string
	for _, p := range s.Packages {
		kinds = append(kinds, p.RegistryType)
	}
	for _, r := range s.Remotes {
		kinds = append(kinds, r.Type)
	}
	if len(kinds) == 0 {
		return "-"
	}
	return strings.Join(kinds, ",")
}

// Variables says which variables the entry refers to: the config
// holds ${NAME}, the value is the user's to set where mcptrunk runs.
func Variables(w io.Writer, vars []registry.Variable) {
	if len(vars) == 0 {
		return
	}
	fmt.Fprintln(w, "It reads these variables from the environment mcptrunk runs in (the config names them, never their values):")
	for _, v := range vars {
		need := "optional"
		if v.Required {
			need = "required"
		}
		if v.Secret {
			need += ", secret"
		}
		state := "not set here"
		if _, ok := os.LookupEnv(v.Name); ok {
			state = "set here"
		}
		desc := ""
		if v.Description != "" {
			desc = ": " + FirstLine(v.Description)
		}
		fmt.Fprintf(w, "  %s (%s, %s)%s\n", v.Name, need, state, desc)
	}
}

// Drift prints one ready server's changes against the lockfile, with
// diffs, and the findings in what it exports now.
func Drift(w io.Writer, server string, changes []pin.Change, now pin.Server, others []string) {
	counts := map[pin.Status]int{}
	for _, ch := range changes {
		counts[ch.Status]++
	}
	if len(changes) == 0 {
		fmt.Fprintf(w, "\nserver %q: matches the lockfile\n", server)
	} else {
		fmt.Fprintf(w, "\nserver %q: %d new, %d changed, %d removed\n", server, counts[pin.New], counts[pin.Changed], counts[pin.Removed])
	}
	for _, ch := range changes {
		fmt.Fprintf(w, "  %s %s %q\n", ch.Status, ch.Kind.Singular(), ch.Key)
		switch ch.Status {
		case pin.New:
			printText(w, ch.New)
		case pin.Changed:
			for _, d := range pin.DiffDefinitions(ch.Kind, ch.Old, ch.New) {
				if d.Lines == nil {
					fmt.Fprintf(w, "    %s: %s\n", d.Field, indentLines(d.Words, "      "))
					continue
				}
				fmt.Fprintf(w, "    %s:\n", d.Field)
				for _, line := range d.Lines {
					fmt.Fprintf(w, "      %s\n", line)
				}
			}
		}
	}
	for _, kind := range pin.Kinds {
		for _, key := range now.Keys(kind) {
			for _, f := range pin.Inspect(kind, key, now[kind][key].Definition, others) {
				fmt.Fprintf(w, "  finding: %s %q: %s\n", kind.Singular(), key, f.Problem)
			}
		}
	}
}

// printText prints a new definition's title and description.
func printText(w io.Writer, def json.RawMessage) {
	const indent = "    "
	var d struct{ Title, Description string }
	_ = json.Unmarshal(def, &d)
	if d.Title != "" {
		fmt.Fprintf(w, "%stitle: %s\n", indent, indentLines(d.Title, indent+"  "))
	}
	if d.Description != "" {
		fmt.Fprintf(w, "%sdescription: %s\n", indent, indentLines(d.Description, indent+"  "))
	}
}

// indentLines indents every line of s but the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// ServeHint is what a bare mcptrunk says when a person runs it in a
// terminal (stdin is one) rather than a host: that it is an MCP server
// waiting for a host on stdin, and how to try it instead. Nothing when
// stdin is not a terminal (a host's pipe) or stdin is not served (--http
// without --stdio).
func ServeHint(stdinTerminal, servesStdin bool) string {
	if !stdinTerminal || !servesStdin {
		return ""
	}
	return `mcptrunk is an MCP server: it is waiting for a host (Claude Desktop, Claude Code, ...) to speak MCP
on stdin, and a host is what should start it. To try it from a terminal:
  mcptrunk list                   the servers, their state, and the tools, prompts and resources they offer
  mcptrunk call NAME '{...}'      call one tool (NAME as list prints it) and print the result
  mcptrunk --help                 every command
Ctrl-C ends it.
`
}

// stderrLead is where a stdio server's error gives the last lines it wrote
// to stderr (upstream/transport/stdio's Err).
const stderrLead = "; last stderr: "

// ErrorLine is a server's error as one line of a table: up to its first
// newline, but when it ends in the server's last stderr lines, the one of
// them that says why (StderrReason) in their place. A server that warns,
// then fails, then exits shows its failure, not its first warning.
func ErrorLine(err string) string {
	before, tail, ok := strings.Cut(err, stderrLead)
	if !ok {
		return FirstLine(err)
	}
	return FirstLine(before) + "; stderr: " + StderrReason(tail)
}

// reasonWords are compiled when a failure is first explained, not at every
// start.
var reasonWords = sync.OnceValue(func() (w struct{ failure, trouble, notFailure *regexp.Regexp }) {
	// failure marks a line that reports a failure outright.
	w.failure = regexp.MustCompile(`(?i)(error|exception|fatal|panic)`)
	// trouble marks one that says what is wrong in other words.
	w.trouble = regexp.MustCompile(`(?i)(fail|cannot|can't|could not|couldn't|unable|denied|refused|not found|no such|invalid|missing|not set|required)`)
	// notFailure marks a line logged at a level below error.
	w.notFailure = regexp.MustCompile(`(?i)^\W*(warn|warning|info|notice|debug|trace)\b`)
	return w
})

// StderrReason picks, of the lines a server wrote to stderr, the one most
// likely to say why it failed: the first that reports a failure (error,
// exception, fatal, panic), else the first that says what is wrong
// (cannot, not found, denied...), else the last. Lines logged as
// warnings or below, and indented ones (stack frames, quoted source), are
// passed over while any other is left.
func StderrReason(tail string) string {
	lines := strings.Split(strings.TrimRight(tail, "\n"), "\n")
	words := reasonWords()
	var candidates []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && l[0] != ' ' && l[0] != '\t' && !words.notFailure.MatchString(l) {
			candidates = append(candidates, l)
		}
	}
	for _, words := range []*regexp.Regexp{words.failure, words.trouble} {
		for _, l := range candidates {
			if words.MatchString(l) {
				return l
			}
		}
	}
	if len(candidates) > 0 {
		return candidates[len(candidates)-1]
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}
