package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// complete asks the command line, as a shell's script does, what to offer
// for the last of words; it returns the candidates and the directive.
func complete(t *testing.T, words ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{cobra.ShellCompRequestCmd}, words...)
	if err := run(context.Background(), args, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("mcptrunk %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("mcptrunk %s: no directive in:\n%s", strings.Join(args, " "), out.String())
	}
	d, err := strconv.Atoi(last[1:])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines[:len(lines)-1] {
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got, cobra.ShellCompDirective(d)
}

// TestCompletionKnowsEveryCommand: completion offers every command of the
// command line and every flag of each, so a new command or flag cannot be
// left out of it (the scripts ask the binary; there is no list to update).
func TestCompletionKnowsEveryCommand(t *testing.T) {
	root := newRootCommand(&environment{global: &globalFlags{}})
	commands, _ := complete(t, "")
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		if !slices.Contains(commands, c.Name()) {
			t.Errorf("completion does not offer the command %q (offers %q)", c.Name(), commands)
		}
		if c.Name() == "help" {
			continue
		}
		flags, _ := complete(t, c.Name(), "--")
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(flags, "--"+f.Name) {
				t.Errorf("completion does not offer %s's flag --%s (offers %q)", c.Name(), f.Name, flags)
			}
		})
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(flags, "--"+f.Name) {
				t.Errorf("completion does not offer %s's flag --%s (offers %q)", c.Name(), f.Name, flags)
			}
			if f.Usage == "" {
				t.Errorf("%s --%s has no help text", c.Name(), f.Name)
			}
		})
	}
}

// TestCompletionValues: flag values and arguments complete from what the
// command line says they are: fixed words, files, or the config's servers.
func TestCompletionValues(t *testing.T) {
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, nil)
	for _, tt := range []struct {
		words []string
		want  []string
		files bool // the shell completes file names
	}{
		{[]string{"list", "--log-level", ""}, []string{"debug", "info", "warn", "error"}, false},
		{[]string{"install", "--scope", ""}, []string{"user", "project"}, false},
		{[]string{"completion", ""}, completionShells, false},
		{[]string{"check", "--config", ""}, nil, true},
		{[]string{"serve", "--tls-cert", ""}, nil, true},
		{[]string{"auth", "--timeout", ""}, nil, false},
		{[]string{"pin", "--config", cfg, ""}, []string{"notes", "weather"}, false},
		{[]string{"auth", "--config", cfg, ""}, nil, false}, // neither is remote
	} {
		got, d := complete(t, tt.words...)
		if !slices.Equal(got, tt.want) || (d&cobra.ShellCompDirectiveNoFileComp == 0) != tt.files {
			t.Errorf("mcptrunk %s: offers %q with directive %d (files: %v), want %q (files: %v)",
				strings.Join(tt.words, " "), got, d, d&cobra.ShellCompDirectiveNoFileComp == 0, tt.want, tt.files)
		}
	}
}

// TestCompletionScripts: each shell's script, as the binary prints it,
// asks the binary for completions and parses in its shell (the syntax
// check is skipped when the shell is not installed).
func TestCompletionScripts(t *testing.T) {
	syntax := map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}}
	for _, shell := range completionShells {
		t.Run(shell, func(t *testing.T) {
			script := completionScriptOf(t, shell)
			if !strings.Contains(script, cobra.ShellCompRequestCmd) || !strings.Contains(script, "mcptrunk") {
				t.Errorf("the %s script does not ask mcptrunk %s:\n%s", shell, cobra.ShellCompRequestCmd, script)
			}
			path := filepath.Join(t.TempDir(), "mcptrunk."+shell)
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed: its script's content was checked, its syntax was not", shell)
			}
			if out, err := exec.Command(shell, append(syntax[shell], path)...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s\nscript:\n%s", shell, strings.Join(syntax[shell], " "), err, out, script)
			}
		})
	}
	if _, errOut, code := runCLI(t, 30*time.Second, "completion", "powershell"); code != 2 || !strings.Contains(errOut, `"powershell" is not one of bash, zsh, fish`) {
		t.Errorf("mcptrunk completion powershell: exit %d, want 2 (usage) and the shells named in:\n%s", code, errOut)
	}
}

// completionCases are command lines, the last word the one being completed,
// and what a shell should offer for it.
func completionCases(dir string) []struct {
	words []string
	want  []string
	files bool // offered by the shell's own file completion
} {
	root := newRootCommand(&environment{global: &globalFlags{}})
	var all []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			all = append(all, c.Name())
		}
	}
	return []struct {
		words []string
		want  []string
		files bool
	}{
		{[]string{"pi"}, []string{"pin"}, false},
		{[]string{""}, all, false},
		{[]string{"--ver"}, []string{"--version"}, false},
		{[]string{"pin", "--y"}, []string{"--yes"}, false},
		{[]string{"auth", "--no"}, []string{"--no-browser"}, false},
		{[]string{"list", "--log-level", "w"}, []string{"warn"}, false},
		{[]string{"completion", "z"}, []string{"zsh"}, false},
		{[]string{"serve", "--st"}, []string{"--stdio"}, false},
		{[]string{"check", "--config", filepath.Join(dir, "my")}, []string{filepath.Join(dir, "mytrunk.json")}, true},
		{[]string{"--config", filepath.Join(dir, "my")}, []string{filepath.Join(dir, "mytrunk.json")}, true},
	}
}

// completionEnv runs a shell with the mcptrunk under test first on PATH:
// the scripts run "mcptrunk __complete ...".
func completionEnv() []string {
	return append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// bashCompWords stands in for _get_comp_words_by_ref of the
// bash-completion package, which cobra's bash script needs and a shell
// started with --norc has not loaded.
const bashCompWords = `_get_comp_words_by_ref() {
  cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
  words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
}
`

// TestCompletionBash runs the bash script's function as bash's completion
// would, and checks what it offers. File names are bash's own completion
// (the script registers with -o default): the script must offer nothing
// for them.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := completionScriptOf(t, "bash")
	if !strings.Contains(script, "complete -o default -F __start_mcptrunk mcptrunk") {
		t.Errorf("the bash script does not leave file names to bash (complete -o default):\n%s", script)
	}
	dir := completionDir(t)
	for _, tt := range completionCases(dir) {
		words := append([]string{"mcptrunk"}, tt.words...)
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		src := bashCompWords + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) +
			"\nCOMP_LINE='" + strings.Join(words, " ") + "'\nCOMP_POINT=${#COMP_LINE}\n__start_mcptrunk\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", src)
		cmd.Env = completionEnv()
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("bash: %v\n%s%s", err, out.String(), errOut.String())
		}
		want := tt.want
		if tt.files {
			want = nil
		}
		if got := strings.Fields(out.String()); !slices.Equal(got, want) {
			t.Errorf("bash offers %q for %q, want %q\n%s", got, strings.Join(words, " "), want, errOut.String())
		}
	}
}

// TestCompletionFish asks fish what it would offer, with the script loaded.
func TestCompletionFish(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	path := filepath.Join(t.TempDir(), "mcptrunk.fish")
	if err := os.WriteFile(path, []byte(completionScriptOf(t, "fish")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := completionDir(t)
	for _, tt := range completionCases(dir) {
		line := "mcptrunk " + strings.Join(tt.words, " ")
		cmd := exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", path, line)
		cmd.Env = completionEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var got []string
		for l := range strings.Lines(string(out)) {
			got = append(got, strings.TrimSpace(strings.SplitN(l, "\t", 2)[0]))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("fish offers %q for %q, want %q", got, line, want)
		}
	}
}

// TestCompletionZsh loads the zsh script as a user's .zshrc would and
// checks that it registers itself for mcptrunk.
func TestCompletionZsh(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed")
	}
	path := filepath.Join(t.TempDir(), "mcptrunk.zsh")
	if err := os.WriteFile(path, []byte(completionScriptOf(t, "zsh")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("zsh", "-f", "-c", "autoload -U compinit && compinit -u -D && source $1 && print -r -- ${_comps[mcptrunk]}", "zsh", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "_mcptrunk" {
		t.Errorf("zsh: sourcing the script: %v\n%s\nwant _mcptrunk registered for mcptrunk", err, out)
	}
}

func completionScriptOf(t *testing.T, shell string) string {
	t.Helper()
	out, errOut, code := runCLI(t, 30*time.Second, "completion", shell)
	if code != 0 {
		t.Fatalf("mcptrunk completion %s: exit %d\n%s", shell, code, errOut)
	}
	return out
}

// completionDir holds one config file, for the --config value to complete.
func completionDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mytrunk.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
