package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// TestVersion runs the binary the suite built: "version" and "--version"
// print the same thing, first "mcptrunk VERSION" and last the toolchain
// and platform.
func TestVersion(t *testing.T) {
	out, errOut, code := runCLI(t, 30*time.Second, "version")
	if code != 0 {
		t.Fatalf("mcptrunk version: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !regexp.MustCompile(`^mcptrunk \S+$`).MatchString(lines[0]) {
		t.Errorf("first line %q, want \"mcptrunk VERSION\"", lines[0])
	}
	wantGo := "go       " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if last := lines[len(lines)-1]; last != wantGo {
		t.Errorf("last line %q, want %q", last, wantGo)
	}
	for _, flag := range []string{"--version", "-version"} {
		if alias, _, code := runCLI(t, 30*time.Second, flag); code != 0 || alias != out {
			t.Errorf("mcptrunk %s: exit %d, printed\n%s\nwant what version printed:\n%s", flag, code, alias, out)
		}
	}
	if _, _, code := runCLI(t, 30*time.Second, "version", "extra"); code != 2 {
		t.Errorf("mcptrunk version extra: exit %d, want 2 (usage)", code)
	}
}

// TestVersionStamped builds mcptrunk as `make dist` does (the version
// stamped with -X, VCS stamps on) and checks that it reports both: the
// release it is, and the commit it was built from. The build is a fresh
// link (other flags than the suite's binaries), so it runs beside the
// other tests rather than before them.
func TestVersionStamped(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: the go command cannot stamp VCS information")
	}
	head := func() string {
		out, err := exec.Command("git", "-C", moduleRoot, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skipf("not a git checkout: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	if fi, err := os.Stat(filepath.Join(moduleRoot, ".git")); err != nil || !fi.IsDir() {
		t.Skip("not a checkout whose .git is a directory (a worktree's is a file): the go command stamps no VCS information")
	}
	before := head()
	bin := filepath.Join(t.TempDir(), "mcptrunk")
	args := []string{"-buildvcs=true", "-ldflags=-X main.buildVersion=v9.8.7-test", "-o", bin, "./cmd/mcptrunk"}
	if raceEnabled {
		// With the suite's -race, the packages compiled for the suite's
		// trunk are reused and only the link is new; without it, a cold
		// cache would compile all of them again.
		args = append([]string{"-race"}, args...)
	}
	if err := testkit.GoBuild(moduleRoot, args...); err != nil {
		t.Fatal(err)
	}
	after := head() // others may commit meanwhile: either is the build's
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^mcptrunk v9\.8\.7-test\ncommit   ([0-9a-f]{40})( \(modified\))?\ndate     (\S+)\ngo       \S+ \S+\n$`)
	m := re.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("mcptrunk version printed\n%s\nwant the stamped version, commit, date and toolchain", out)
	}
	if m[1] != before && m[1] != after {
		t.Errorf("commit %s, want HEAD (%s)", m[1], after)
	}
	if _, err := time.Parse(time.RFC3339, m[3]); err != nil {
		t.Errorf("date %q: %v", m[3], err)
	}
}
