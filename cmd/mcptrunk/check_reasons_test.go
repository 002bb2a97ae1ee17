package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCheckTellsWhy: check names the config it loaded and says why each
// server failed in words a person acts on: the line of a server's stderr
// that reports its failure (not a warning written before it), a command
// that is not there named as missing, and entries that cannot be used
// counted on the first line rather than called ok.
func TestCheckTellsWhy(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the failing server is a shell script")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fails.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'Warning: first line' >&2\necho 'Error: the real reason' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]server{
		"fails":   {"command": script},
		"missing": {"command": "mcptrunk-e2e-no-such-command"},
		"unset":   {"url": "https://x.example.invalid/mcp", "headers": map[string]string{"Authorization": "Bearer ${MCPTRUNK_TEST_UNSET_TOKEN}"}},
	}, nil)
	out, errOut, code := runCLI(t, time.Minute, "check", "--config", cfg)
	if code != 1 {
		t.Fatalf("check: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	table := out[strings.Index(out, "SERVER"):]
	for _, want := range []string{
		"config: " + cfg + ": 3 servers, 1 of which cannot be used\n",
		"Error: the real reason",
		`command "mcptrunk-e2e-no-such-command" not found: it is in no directory of PATH`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check lacks %q:\n%s", want, out)
		}
	}
	if line := lineWith(table, "fails "); !strings.Contains(line, "Error: the real reason") || strings.Contains(line, "Warning") {
		t.Errorf("the table's line for the failing server: %q", line)
	}
	if strings.Contains(out, "fork/exec") {
		t.Errorf("check names the system call:\n%s", out)
	}
}

// lineWith is the first line of s that contains sub ("" when none).
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// With code mode on, check says where the runner of its programs is: next
// to mcptrunk, where make build and the release archives put it.
func TestCheckFindsCodeRunner(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{}, map[string]any{"codeMode": map[string]any{"enabled": true}})
	out, errOut, code := runCLI(t, time.Minute, "check", "--config", cfg)
	want := "trunk.codeMode: programs run in " + filepath.Join(filepath.Dir(trunkBin), "mcptrunk-code")
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("check: exit %d, want 0 and %q:\n%s\n%s", code, want, out, errOut)
	}
}

// With code mode on and no runner beside mcptrunk nor on PATH, check
// names the runner and how to install it, and exits 1; serve warns.
func TestCheckMissingCodeRunner(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the copy of mcptrunk is run by its Unix name")
	}
	alone := filepath.Join(t.TempDir(), "mcptrunk")
	b, err := os.ReadFile(trunkBin)
	if err == nil {
		err = os.WriteFile(alone, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]server{}, map[string]any{"codeMode": map[string]any{"enabled": true}})
	run := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(alone, args...)
		cmd.Env = append(os.Environ(), tagEnv+"="+newTag(t), "PATH="+t.TempDir())
		r := &cliRun{args: args}
		cmd.Stdin, cmd.Stdout = strings.NewReader(""), &r.out
		r.p = startProc(t, "mcptrunk "+args[0]+" (no runner)", cmd, procOptions{})
		return r.wait(t, time.Minute)
	}
	const missing = "code mode's runner mcptrunk-code is neither next to the mcptrunk executable nor on PATH (install it: go install github.com/mcptrunk/mcptrunk/cmd/mcptrunk-code@latest"
	if out, errOut, code := run("check", "--config", cfg); code != 1 || !strings.Contains(out, missing) {
		t.Errorf("check without the runner: exit %d, want 1 and the runner named:\n%s\n%s", code, out, errOut)
	}
	// serve says so at start (here it ends at once: its stdin is empty).
	if _, errOut, _ := run("serve", "--config", cfg); !strings.Contains(errOut, "run_code will fail: "+missing) {
		t.Errorf("serve without the runner does not warn:\n%s", errOut)
	}
}
