package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runIn runs the command line in this process, for what needs no servers.
func runIn(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestHelp: every command has its own help, on stdout with success, listing
// every flag it takes (its own and the global ones), whichever way it is
// asked for.
func TestHelp(t *testing.T) {
	root := newRootCommand(&environment{global: &globalFlags{}})
	cmds := []*cobra.Command{root}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			cmds = append(cmds, c)
		}
	}
	for _, c := range cmds {
		name := strings.TrimPrefix(c.CommandPath(), "mcptrunk")
		words := strings.Fields(name)
		var flags []string
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { flags = append(flags, "--"+f.Name) })
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { flags = append(flags, "--"+f.Name) })
		asks := [][]string{append(slices.Clone(words), "--help"), append(slices.Clone(words), "-h")}
		if len(words) > 0 {
			asks = append(asks, append([]string{"help"}, words...))
		}
		for _, args := range asks {
			out, errOut, err := runIn(args...)
			if err != nil || errOut != "" {
				t.Errorf("mcptrunk %s: %v, stderr %q", strings.Join(args, " "), err, errOut)
				continue
			}
			if !strings.Contains(out, "Usage:\n  "+c.UseLine()) {
				t.Errorf("mcptrunk %s does not show %q:\n%s", strings.Join(args, " "), c.UseLine(), out)
			}
			for _, f := range flags {
				if !strings.Contains(out, f+" ") {
					t.Errorf("mcptrunk %s does not list %s:\n%s", strings.Join(args, " "), f, out)
				}
			}
		}
	}
	// The flags the global usage never mentioned.
	out, _, _ := runIn("serve", "--help")
	for _, f := range []string{"--http ADDR", "--stdio", "--token-file FILE", "--tls-cert FILE", "--tls-key FILE", "--allow-origin ORIGIN", "--metrics ADDR", "--config FILE"} {
		if !strings.Contains(out, f) {
			t.Errorf("serve --help does not list %q:\n%s", f, out)
		}
	}
	if out, _, _ := runIn("check", "--help"); !strings.Contains(out, "--refresh") {
		t.Errorf("check --help does not list --refresh:\n%s", out)
	}
	// And the process: help is not an error.
	for _, args := range [][]string{{"--help"}, {"-h"}, {"call", "--help"}, {"help", "serve"}} {
		if out, errOut, code := runCLI(t, 30*time.Second, args...); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("mcptrunk %s: exit %d, want 0 and the usage on stdout\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestUsageErrors: a command line that is wrong says what is wrong, once,
// and where help is, and exits 2.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"lsit"}, []string{`unknown command "lsit"`, "Did you mean this?\n\tlist\n", "Run 'mcptrunk --help' for usage."}},
		{[]string{"chekc", "--config", "x.json"}, []string{`unknown command "chekc"`, "\tcheck\n"}},
		{[]string{"check", "extra"}, []string{`check takes no arguments (got "extra")`, "Run 'mcptrunk check --help' for usage."}},
		{[]string{"list", "a", "b"}, []string{`list takes no arguments (got "a" "b")`}},
		{[]string{"version", "extra"}, []string{`version takes no arguments (got "extra")`}},
		{[]string{"call"}, []string{"call needs NAME", "Run 'mcptrunk call --help' for usage."}},
		{[]string{"call", "a", "{}", "c"}, []string{`call takes at most 2 arguments (got "c" too)`}},
		{[]string{"auth"}, []string{"auth needs SERVER"}},
		{[]string{"auth", "a", "b"}, []string{`auth takes at most 1 argument (got "b" too)`}},
		{[]string{"install", "claude-desktop"}, []string{`install takes no arguments (got "claude-desktop"); name the host with --host`}},
		{[]string{"list", "--nope"}, []string{"unknown flag: --nope", "Run 'mcptrunk list --help' for usage."}},
		{[]string{"--nope"}, []string{"unknown flag: --nope", "Run 'mcptrunk serve --help' for usage."}},
		{[]string{"pin", "--yes=maybe"}, []string{`invalid argument "maybe" for "--yes" flag`}},
		{[]string{"completion", "powershell"}, []string{`completion: "powershell" is not one of bash, zsh, fish`}},
	} {
		line := strings.Join(tt.args, " ")
		out, errOut, code := runCLI(t, 30*time.Second, tt.args...)
		if code != 2 || out != "" {
			t.Errorf("mcptrunk %s: exit %d, stdout %q; want 2 and nothing on stdout", line, code, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("mcptrunk %s: stderr does not say %q:\n%s", line, w, errOut)
			}
		}
		if n := strings.Count(errOut, "mcptrunk: "); n != 1 {
			t.Errorf("mcptrunk %s: the error is printed %d times:\n%s", line, n, errOut)
		}
	}
	if _, _, err := runIn("check", "extra"); !errors.Is(err, errUsage) {
		t.Errorf("run check extra: %v, want a usage error", err)
	}
}

// TestFlagsAnywhere: flags may come after positional arguments, and "--"
// ends them.
func TestFlagsAnywhere(t *testing.T) {
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	out, errOut, code := runCLI(t, time.Minute, "call", "mcp__notes__search", `{"query":"proxy"}`, "--log-level", "debug", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"content"`) {
		t.Fatalf("call NAME JSON --log-level debug --config FILE: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "DBG") {
		t.Errorf("--log-level debug after the arguments did not apply: no debug line in\n%s", errOut)
	}
	_, errOut, code = runCLI(t, time.Minute, "call", "--config", cfg, "--", "mcp__notes__search", "--log-level")
	if code != 2 || !strings.Contains(errOut, "arguments for mcp__notes__search must be a JSON object") {
		t.Errorf(`call -- NAME --log-level: exit %d, want 2 (a usage error) with "--log-level" taken as the arguments:\n%s`, code, errOut)
	}
}

// TestDefaultToServe: a command line with no command is serve's; one with
// a word is left to the commands (or to "did you mean").
func TestDefaultToServe(t *testing.T) {
	root := newRootCommand(&environment{global: &globalFlags{}})
	for _, tt := range []struct{ args, want []string }{
		{nil, []string{"serve"}},
		{[]string{"--config", "x.json"}, []string{"serve", "--config", "x.json"}},
		{[]string{"--stdio", "--http", "127.0.0.1:0"}, []string{"serve", "--stdio", "--http", "127.0.0.1:0"}},
		{[]string{"--http=127.0.0.1:0", "--log-level", "debug"}, []string{"serve", "--http=127.0.0.1:0", "--log-level", "debug"}},
		{[]string{"--nope"}, []string{"serve", "--nope"}},
		{[]string{"--config", "x.json", "list"}, []string{"--config", "x.json", "list"}},
		{[]string{"lsit"}, []string{"lsit"}},
		{[]string{"--help"}, []string{"--help"}},
		{[]string{"--config", "x.json", "-h"}, []string{"--config", "x.json", "-h"}},
		{[]string{"--version"}, []string{"--version"}},
		{[]string{"-version"}, []string{"--version"}},
	} {
		if got := defaultToServe(root, tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("defaultToServe(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestFatalErrorOnce: an error that ends serve is said once, in the log.
// It was logged and then printed again.
func TestFatalErrorOnce(t *testing.T) {
	missing := t.TempDir() + "/missing.json"
	_, errOut, code := runCLI(t, 30*time.Second, "--config", missing)
	if code != 1 || strings.Count(errOut, missing) != 1 {
		t.Errorf("mcptrunk --config MISSING: exit %d, want 1 and the error once:\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, 30*time.Second, "list", "--config", missing)
	if code != 1 || strings.Count(errOut, missing) != 1 || !strings.HasPrefix(errOut, "mcptrunk: ") {
		t.Errorf("mcptrunk list --config MISSING: exit %d, want 1 and the error once:\n%s", code, errOut)
	}
}

// TestNoConfigSuggestsImport: with no config anywhere, the error says how
// to make one: add a server, or see the hosts' servers with import (not
// import --write, which writes nothing when the hosts have none).
func TestNoConfigSuggestsImport(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"list"}, {}} {
		cmd := trunkCmd(newTag(t), args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Env, "HOME="+dir, "XDG_CONFIG_HOME="+dir, "MCPTRUNK_CONFIG=")
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "no config file found") || !strings.Contains(string(out), "mcptrunk add NAME -- COMMAND") ||
			!strings.Contains(string(out), "run mcptrunk import to see") || strings.Contains(string(out), "--write") {
			t.Errorf("mcptrunk %s with no config: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestExitCodes: how main ends for what run returns.
func TestExitCodes(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
		msg  string
	}{
		{nil, 0, ""},
		{errors.New("boom"), 1, "boom"},
		{exitError(3), 3, ""},
		{errUsage, 2, ""},
		{reportedError{errors.New("logged")}, 1, ""},
	} {
		if code, msg := exitCode(tt.err), fatalMessage(tt.err); code != tt.code || msg != tt.msg {
			t.Errorf("%v: exit %d and %q, want %d and %q", tt.err, code, msg, tt.code, tt.msg)
		}
	}
}

// TestCheckCountsInWords: check counts servers as people do ("1 server").
func TestCheckCountsInWords(t *testing.T) {
	cfg := writeConfig(t, map[string]server{"gone": {"command": "/nonexistent/mcptrunk-test-server"}}, nil)
	out, errOut, code := runCLI(t, 30*time.Second, "check", "--config", cfg)
	for _, want := range []string{"config: " + cfg + ": ok, 1 server\n", "1 of 1 server failed\n"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("check: exit %d, want 1 and %q in:\n%s\n%s", code, want, out, errOut)
		}
	}
}

// TestUsageErrorsExit2: a mistake in the command line that a command finds
// after parsing (a flag's value, flags that do not go together) exits 2
// and is said once, as the parser's own are.
func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--log-level", "loud", "--config", cfg}, `--log-level: "loud" is not one of debug, info, warn, error`},
		{[]string{"search", "x", "--limit", "0"}, "--limit 0: want 1 or more"},
		{[]string{"auth", "notes", "--timeout", "0s", "--config", cfg}, "--timeout must be positive"},
		{[]string{"import", "--from", "emacs"}, "--from emacs: neither a host"},
		{[]string{"import", "--from", "claude"}, `--from claude: host "claude" could be claude-desktop (Claude Desktop) or claude-code (Claude Code)`},
		{[]string{"serve", "--stdio", "--config", cfg}, "go with --http"},
		{[]string{"serve", "--http", "nowhere", "--config", cfg}, `want HOST:PORT`},
		{[]string{"call", "mcp__notes__echo", "[1]", "--config", cfg}, "must be a JSON object"},
	} {
		_, stderr, code := runCLI(t, 30*time.Second, c.args...)
		if code != 2 || strings.Count(stderr, c.want) != 1 {
			t.Errorf("mcptrunk %s: exit %d, want 2 and %q said once:\n%s", strings.Join(c.args, " "), code, c.want, stderr)
		}
	}
}
