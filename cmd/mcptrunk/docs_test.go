package main

// The README and docs/ kept true: the quick start's commands run as
// written in an empty home, and every command, flag, link and file the
// pages name exists.

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docPages are the pages the docs test reads, relative to the module root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(moduleRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(moduleRoot, "docs", "examples", "README.md"))
	return append([]string{filepath.Join(moduleRoot, "README.md"), filepath.Join(moduleRoot, "CONTRIBUTING.md")}, pages...)
}

var (
	codeSpan  = regexp.MustCompile("`([^`\n]+)`")
	codeBlock = regexp.MustCompile("(?ms)^```(\\w*)\n(.*?)^```")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading   = regexp.MustCompile(`(?m)^#+ (.+)$`)
	// repoPath is a code span that names a file of this repository.
	repoPath = regexp.MustCompile(`^(docs|deploy|testdata|cmd|internal|proxy|upstream|naming|\.ci)/[A-Za-z0-9_./*-]*$`)
	// goIdent is a package path with one of its identifiers
	// (internal/jsonrpc.Conn).
	goIdent = regexp.MustCompile(`^([a-z0-9_/]+)\.[A-Z]\w*(\.\w+)?$`)
	// flagWord is how a flag is written.
	flagWord = regexp.MustCompile(`^--[a-z][a-z0-9-]*(=|$)`)
)

// TestDocsNameWhatExists: in the README, CONTRIBUTING.md and docs/, every
// mcptrunk command line names commands and flags the program has, every
// flag written alone is one of some command's, every relative link and
// anchor leads somewhere, every file of the repository named exists, and
// mcptrunk's config is put where the program looks for it.
func TestDocsNameWhatExists(t *testing.T) {
	root := newRootCommand(&environment{global: &globalFlags{}})
	allFlags := map[string]bool{"help": true, "version": true}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { allFlags[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { allFlags[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	configHelp := root.PersistentFlags().Lookup("config").Usage

	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		name, _ := filepath.Rel(moduleRoot, page)

		var lines []string // command lines: the lines of sh blocks, then code spans
		for _, b := range codeBlock.FindAllStringSubmatch(text, -1) {
			if b[1] == "sh" || b[1] == "" {
				lines = append(lines, strings.Split(b[2], "\n")...)
			}
		}
		blockLines := len(lines)
		prose := codeBlock.ReplaceAllString(text, "")
		for _, m := range codeSpan.FindAllStringSubmatch(prose, -1) {
			lines = append(lines, m[1])
		}
		for i, line := range lines {
			for _, problem := range checkCommandLine(root, allFlags, line, i >= blockLines) {
				t.Errorf("%s: %q: %s", name, line, problem)
			}
			span := strings.TrimSpace(line)
			if m := goIdent.FindStringSubmatch(span); m != nil {
				span = m[1] // a package's identifier: the package's directory
			}
			if repoPath.MatchString(span) {
				if matches, _ := filepath.Glob(filepath.Join(moduleRoot, filepath.FromSlash(strings.TrimSuffix(span, "/")))); len(matches) == 0 {
					t.Errorf("%s: names %s, which is not in the repository", name, span)
				}
			}
			for _, p := range []string{"~/.config/mcptrunk/", "$XDG_CONFIG_HOME/mcptrunk/"} {
				if i := strings.Index(line, p); i >= 0 {
					file := strings.FieldsFunc(line[i+len(p):], func(r rune) bool { return strings.ContainsRune(" `\"',;)", r) })
					if len(file) > 0 && strings.HasSuffix(file[0], ".json") && !strings.Contains(configHelp, "mcptrunk/"+file[0]) {
						t.Errorf("%s: %q puts mcptrunk's config at %s%s, where the program does not look (--config: %s)", name, line, p, file[0], configHelp)
					}
				}
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			if problem := checkLink(page, m[1]); problem != "" {
				t.Errorf("%s: link %s: %s", name, m[1], problem)
			}
		}
	}
}

// checkCommandLine finds an mcptrunk command in line (at its start, or
// after "--" as a host's command line has it) and says what of it the
// program lacks: a command, or a flag of that command. A code span that
// is a flag alone (span) must be one of some command's.
func checkCommandLine(root *cobra.Command, allFlags map[string]bool, line string, span bool) []string {
	line = strings.ReplaceAll(line, `\|`, "|")
	words := strings.Fields(line)
	if span && len(words) > 0 && flagWord.MatchString(words[0]) {
		if f := flagName(words[0]); f != "" && !allFlags[f] && !foreignFlags[f] {
			return []string{"no command has the flag --" + f}
		}
		return nil
	}
	start := -1
	for i, w := range words {
		w = strings.Trim(w, `"'[]`)
		base := filepath.Base(w)
		if (base == "mcptrunk" || base == "mcptrunk.exe") && !strings.HasPrefix(w, "cmd/") && (i == 0 || words[i-1] == "--") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil
	}
	var problems []string
	cmd, positional := root, false
	for _, w := range words[start+1:] {
		if strings.HasPrefix(w, "#") || slices.Contains([]string{"|", "||", "&&", ";", ">", "2>&1"}, w) || strings.HasPrefix(w, ">") {
			break // a comment, or the next command
		}
		w = strings.Trim(w, "[]()")
		switch {
		case flagWord.MatchString(w):
			f := flagName(w)
			if f == "" || f == "help" || f == "version" {
				continue
			}
			if cmd.Flags().Lookup(f) == nil && cmd.InheritedFlags().Lookup(f) == nil && root.PersistentFlags().Lookup(f) == nil {
				problems = append(problems, "mcptrunk "+cmd.Name()+" has no flag --"+f)
			}
		case positional || w == "" || strings.HasPrefix(w, "-"):
		case regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w):
			if sub := findSub(cmd, w); sub != nil {
				cmd = sub
				continue
			}
			if cmd == root {
				problems = append(problems, "mcptrunk has no command "+w)
			}
			positional = true
		default:
			positional = true // a placeholder (COMMAND, NAME), a value, a path
		}
	}
	return problems
}

// foreignFlags are flags of other programs that the docs show alone.
var foreignFlags = map[string]bool{
	"build-arg": true, // docker build (docs/deploy.md)
	"force":     true, // the MCP conformance runner (docs/protocol.md)
}

func flagName(w string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
	return strings.TrimRight(name, ",.;:")
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || slices.Contains(sub.Aliases, name) {
			return sub
		}
	}
	return nil
}

// checkLink says what is wrong with a relative link of page ("" when it
// leads somewhere): its file, or the heading its anchor names.
func checkLink(page, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	path := page
	if file != "" {
		path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
	}
	st, err := os.Stat(path)
	if err != nil {
		return "no such file"
	}
	if anchor == "" || st.IsDir() || !strings.HasSuffix(path, ".md") {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	for _, h := range heading.FindAllStringSubmatch(codeBlock.ReplaceAllString(string(data), ""), -1) {
		if slug(h[1]) == anchor {
			return ""
		}
	}
	return "no heading #" + anchor + " in " + filepath.Base(path)
}

// slug is the anchor GitHub gives a heading: lower case, spaces made
// hyphens, punctuation other than hyphens and underscores dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readmeSection returns the lines of the sh blocks under the README's
// heading title.
func readmeSection(t *testing.T, title string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in, block := false, false
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## "+title
		case in && l == "```sh":
			block = true
		case in && block && l == "```":
			block = false
		case in && block:
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("the README has no sh block under %q", title)
	}
	return out
}

// shellWords splits a command line as a shell would, for the quoting the
// README uses ('...' and "..."), dropping a trailing # comment.
func shellWords(line string) []string {
	var (
		words []string
		cur   strings.Builder
		quote rune
		in    bool
	)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '#' && !in:
			return words
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// quickStartOnline are the README's quick start lines that need the
// network, which the test does not run, and why.
var quickStartOnline = map[string]string{
	"mcptrunk search github": "asks the MCP registry",
	"mcptrunk list":          "starts the servers added above: npx fetches a package, the remote one is reached",
}

// TestReadmeQuickStart: the README's quick start and "Add a server" run as
// written in an empty home: each command exits 0, the host gets mcptrunk,
// and the config ends with what the lines added and not what they removed.
func TestReadmeQuickStart(t *testing.T) {
	h := newFakeHome(t)
	seen := map[string]bool{}
	for _, section := range []string{"Quick start", "Add a server"} {
		for _, line := range readmeSection(t, section) {
			words := shellWords(line)
			if len(words) == 0 || words[0] != "mcptrunk" {
				t.Errorf("%s: %q is not an mcptrunk command", section, line)
				continue
			}
			cmdline := strings.Join(words, " ")
			seen[cmdline] = true
			if _, online := quickStartOnline[cmdline]; online {
				continue
			}
			if stdout, stderr, code := h.run(t, words[1:]...); code != 0 {
				t.Errorf("%s: %q: exit %d\nstdout:\n%s\nstderr:\n%s", section, line, code, stdout, stderr)
			}
		}
	}
	for line := range quickStartOnline {
		if !seen[line] {
			t.Errorf("quickStartOnline has %q, which the README's quick start no longer has", line)
		}
	}
	host, err := os.ReadFile(h.path(t, "claude-desktop", "user"))
	if err != nil || !strings.Contains(string(host), `"trunk"`) {
		t.Errorf("after the quick start Claude Desktop's file is %q (%v), without mcptrunk", host, err)
	}
	cfg, err := os.ReadFile(h.configPath())
	if err != nil || !strings.Contains(string(cfg), `"memory"`) || strings.Contains(string(cfg), `"docs"`) {
		t.Errorf("after the quick start mcptrunk's config is %q (%v): want memory, and docs removed", cfg, err)
	}
}
