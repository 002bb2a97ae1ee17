//go:build windows

package stdio

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio/internal/winexec"
)

// TestBatchHelper is the program the batch file of TestBatchArgumentsArriveIntact
// starts: it prints the arguments it received, as JSON.
func TestBatchHelper(t *testing.T) {
	if os.Getenv("MCPTRUNK_BATCH_HELPER") != "1" {
		t.Skip("run by TestBatchArgumentsArriveIntact")
	}
	_ = json.NewEncoder(os.Stdout).Encode(flag.Args())
	os.Exit(0)
}

// TestBatchArgumentsArriveIntact runs a batch shim the way npm installs
// them (a .cmd that hands %* to a program), found through PATH and PATHEXT
// by a bare name, and checks that hostile arguments reach the program as
// given and run nothing.
func TestBatchArgumentsArriveIntact(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	shim := fmt.Sprintf("@\"%s\" \"-test.run=^TestBatchHelper$\" -- %%*\r\n", exe)
	if err := os.WriteFile(filepath.Join(dir, "shim.cmd"), []byte(shim), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+dir+";"+os.Getenv("PATH"), "PATHEXT=.COM;.EXE;.CMD", "MCPTRUNK_BATCH_HELPER=1")
	args := []string{
		"plain", "a b", "", `a" & echo INJECTED & "`, "a&b|c<d>e^f(g)", `C:\dir\`, `a\"b`, `\\"`,
		`{"k":"v w"}`, "a,b;c=d", "naïve 日本語", "\ttab",
	}
	cmd, err := command("shim", args, mergeEnv(env, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmd.SysProcAttr.CmdLine, "shim.cmd") {
		t.Fatalf("the command line %q does not run the shim", cmd.SysProcAttr.CmdLine)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the shim: %v (%s)", err, out)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the helper printed %q: %v", out, err)
	}
	if !slices.Equal(got, args) {
		t.Errorf("the program received\n  %q\nwant\n  %q", got, args)
	}
}

func TestBatchArgumentRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shim.cmd"), []byte("@echo %*\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + dir, "PATHEXT=.CMD"}
	_, err := command("shim", []string{"ok", "%SECRET%"}, env, "")
	var ae *winexec.ArgError
	if !errors.As(err, &ae) || ae.Index != 1 || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("command = %v; want args[1] refused without its value", err)
	}
}

func TestCommandNotFound(t *testing.T) {
	_, err := command("no-such-server", nil, []string{"PATH=" + t.TempDir()}, "")
	if !errors.Is(err, winexec.ErrNotFound) {
		t.Errorf("command = %v; want ErrNotFound", err)
	}
}

// TestJobKillsTheTree starts cmd.exe, which starts a long ping, puts it in
// the job and kills the job: the leader must exit at once.
func TestJobKillsTheTree(t *testing.T) {
	shell, err := cmdExe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell, "/d", "/c", "ping -n 60 127.0.0.1 >nul")
	g, err := newProcessGroup()
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := g.add(cmd.Process); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := g.kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the job's leader survived TerminateJobObject")
	}
}
