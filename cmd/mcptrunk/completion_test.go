package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCompletionKnowsEveryCommand keeps the completion table in step with
// the dispatcher: the words run's switch accepts are exactly those the
// table lists, so a new subcommand cannot be left out of completion.
func TestCompletionKnowsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(moduleRoot, "cmd", "mcptrunk", "main.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var dispatched []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "run" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if id, ok := sw.Tag.(*ast.Ident); !ok || id.Name != "name" {
				return true
			}
			for _, st := range sw.Body.List {
				for _, e := range st.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						dispatched = append(dispatched, s)
					}
				}
			}
			return false
		})
		return false
	})
	if len(dispatched) == 0 {
		t.Fatal(`found no "switch name" in run in main.go: update this test to read the dispatcher`)
	}
	var listed []string
	for _, sc := range subcommands {
		listed = append(listed, sc.name)
	}
	slices.Sort(dispatched)
	slices.Sort(listed)
	if !slices.Equal(dispatched, listed) {
		t.Errorf("run dispatches %q, but the completion table (subcommands in completion.go) lists %q", dispatched, listed)
	}
}

// TestCompletionScripts: each shell's script, as the binary prints it, names
// every subcommand and every flag of each, and the shell parses it (the
// syntax check is skipped when the shell is not installed).
func TestCompletionScripts(t *testing.T) {
	syntax := map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}}
	for _, shell := range completionShells {
		t.Run(shell, func(t *testing.T) {
			script := completionScriptOf(t, shell)
			for _, c := range completionModel() {
				if !containsWord(script, c.Name) {
					t.Errorf("the %s script does not name the command %q", shell, c.Name)
				}
				for _, f := range c.Flags {
					want := "--" + f.Name
					if shell == "fish" {
						want = "-l " + f.Name
					}
					if !strings.Contains(script, want) {
						t.Errorf("the %s script does not offer %s's flag %s", shell, c.Name, want)
					}
				}
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
	if _, _, code := runCLI(t, 30*time.Second, "completion", "powershell"); code != 2 {
		t.Errorf("mcptrunk completion powershell: exit %d, want 2 (usage)", code)
	}
}

// completionCases are command lines, the last word the one being completed,
// and what a shell should offer for it.
func completionCases(dir string) []struct {
	words []string
	want  []string
} {
	all := make([]string, 0, len(subcommands))
	for _, sc := range subcommands {
		all = append(all, sc.name)
	}
	return []struct {
		words []string
		want  []string
	}{
		{[]string{"pi"}, []string{"pin"}},
		{[]string{""}, all},
		{[]string{"--ver"}, []string{"--version"}},
		{[]string{"pin", "--y"}, []string{"--yes"}},
		{[]string{"auth", "--no"}, []string{"--no-browser"}},
		{[]string{"list", "--log-level", "w"}, []string{"warn"}},
		{[]string{"completion", "z"}, []string{"zsh"}},
		{[]string{"check", "--config", filepath.Join(dir, "my")}, []string{filepath.Join(dir, "mytrunk.json")}},
		{[]string{"--config", filepath.Join(dir, "my")}, []string{filepath.Join(dir, "mytrunk.json")}},
	}
}

// TestCompletionBash runs the bash script's function as bash's completion
// would, and checks what it offers.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	script := completionScriptOf(t, "bash")
	dir := completionDir(t)
	for _, tt := range completionCases(dir) {
		words := append([]string{"mcptrunk"}, tt.words...)
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		src := script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) +
			"\n_mcptrunk\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command("bash", "--norc", "--noprofile", "-c", src).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, tt.want) {
			t.Errorf("bash offers %q for %q, want %q", got, strings.Join(words, " "), tt.want)
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
		out, err := exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", path, line).CombinedOutput()
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

// containsWord reports whether w occurs in s between non-word characters.
func containsWord(s, w string) bool {
	isWord := func(b byte) bool {
		return b == '_' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || !isWord(s[j-1])) && (j+len(w) == len(s) || !isWord(s[j+len(w)])) {
			return true
		}
		i = j + 1
	}
}
