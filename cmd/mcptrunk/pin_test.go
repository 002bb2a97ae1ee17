package main

// mcptrunk pin: reviewing the servers' definitions against the lockfile and
// recording them, with chaos servers whose definitions the environment sets.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const pinRunTimeout = 60 * time.Second

// chaosWithEnv is a chaos server with these CHAOS_* variables.
func chaosWithEnv(env map[string]string) server {
	s := chaosServer()
	if env != nil {
		s["env"] = env
	}
	return s
}

// lockfilePath is where the lockfile of the config at path is.
func lockfilePath(path string) string {
	return filepath.Join(filepath.Dir(path), "mcptrunk.lock.json")
}

// lockfileDoc is the lockfile's content: server → kind → key → entry.
type lockfileDoc struct {
	Version int `json:"version"`
	Servers map[string]map[string]map[string]struct {
		SHA256     string          `json:"sha256"`
		Definition json.RawMessage `json:"definition"`
	} `json:"servers"`
}

// readLockfile reads and decodes the lockfile at path.
func readLockfile(t *testing.T, path string) (lockfileDoc, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l lockfileDoc
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("the lockfile is not JSON: %v\n%s", err, data)
	}
	return l, data
}

// runPin runs mcptrunk pin with args and fails unless it exits with
// code and its stdout has every one of want.
func runPin(t *testing.T, code int, want []string, args ...string) string {
	t.Helper()
	stdout, stderr, got := runCLI(t, pinRunTimeout, append([]string{"pin"}, args...)...)
	if got != code {
		t.Fatalf("mcptrunk pin %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, stdout, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("mcptrunk pin %s: stdout lacks %q:\n%s", strings.Join(args, " "), w, stdout)
		}
	}
	return stdout
}

// The whole review cycle: recorded on the first run, then each change to a
// definition (a description, a new tool, a tool gone) is shown by --check
// (exit 1), left unrecorded when the user says no, recorded when the user
// says yes. trunk.pin "off" makes no difference to the command.
func TestPinReviewAndRecord(t *testing.T) {
	t.Parallel()
	trunk := map[string]any{"pin": "off"}
	cfg := writeConfig(t, map[string]server{"chaos": chaosWithEnv(nil)}, trunk)
	lockPath := lockfilePath(cfg)

	runPin(t, 0, []string{`server "chaos": `, `new tool "ping_tool"`, "Answers pong.", `new resource "chaos://state"`, "Recorded"},
		"--config", cfg, "--yes")
	lock, _ := readLockfile(t, lockPath)
	ping, ok := lock.Servers["chaos"]["tools"]["ping_tool"]
	if lock.Version != 1 || !ok {
		t.Fatalf("the lockfile has no ping_tool of chaos: %+v", lock)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(ping.SHA256) {
		t.Errorf("ping_tool's sha256 is %q", ping.SHA256)
	}
	var def struct{ Name, Description string }
	if err := json.Unmarshal(ping.Definition, &def); err != nil || def.Name != "ping_tool" || def.Description != "Answers pong." {
		t.Errorf("ping_tool's definition in the lockfile: %s", ping.Definition)
	}
	if _, ok := lock.Servers["chaos"]["tools"]["hang"]; !ok {
		t.Error("the lockfile has no hang tool")
	}
	runPin(t, 0, []string{`server "chaos": matches the lockfile`, "Everything matches the lockfile"}, "--config", cfg, "--check")

	// A changed description: shown word by word, recorded only when agreed.
	writeConfigAt(t, cfg, map[string]server{"chaos": chaosWithEnv(map[string]string{"CHAOS_PING_DESCRIPTION": "Answers pong, twice over."})}, trunk)
	_, before := readLockfile(t, lockPath)
	runPin(t, 1, []string{`changed tool "ping_tool"`, "description: Answers [-pong.-]{+pong, twice over.+}", "1 change not in the lockfile"},
		"--config", cfg, "--check")
	stdout, stderr, code := runCLIInput(t, pinRunTimeout, "n\n", "pin", "--config", cfg)
	if code != 1 || !strings.Contains(stdout, "Record these changes in "+lockPath+"? [y/N]") || !strings.Contains(stdout, "Nothing recorded") {
		t.Errorf("pin answered no: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, after := readLockfile(t, lockPath); !bytes.Equal(before, after) {
		t.Errorf("the lockfile changed although the user said no:\n%s", after)
	}
	runPin(t, 0, []string{"Answers [-pong.-]{+pong, twice over.+}", "Recorded 1 change"}, "--config", cfg, "--yes")
	runPin(t, 0, []string{"Everything matches the lockfile"}, "--config", cfg, "--check")
	lock, _ = readLockfile(t, lockPath)
	if d := lock.Servers["chaos"]["tools"]["ping_tool"].Definition; !strings.Contains(string(d), "Answers pong, twice over.") {
		t.Errorf("the recorded ping_tool: %s", d)
	}

	// A new tool, accepted with "yes" on stdin.
	env := map[string]string{"CHAOS_PING_DESCRIPTION": "Answers pong, twice over.", "CHAOS_EXTRA_TOOL": "bonus"}
	writeConfigAt(t, cfg, map[string]server{"chaos": chaosWithEnv(env)}, trunk)
	runPin(t, 1, []string{`server "chaos": 1 new, 0 changed, 0 removed`, `new tool "bonus"`, "An extra tool."}, "--config", cfg, "--check")
	stdout, stderr, code = runCLIInput(t, pinRunTimeout, "yes\n", "pin", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "Recorded 1 change") {
		t.Errorf("pin answered yes: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if lock, _ = readLockfile(t, lockPath); lock.Servers["chaos"]["tools"]["bonus"].SHA256 == "" {
		t.Error("the new tool was not recorded")
	}

	// A tool gone.
	env["CHAOS_NO_HANG"] = "1"
	writeConfigAt(t, cfg, map[string]server{"chaos": chaosWithEnv(env)}, trunk)
	runPin(t, 1, []string{`server "chaos": 0 new, 0 changed, 1 removed`, `removed tool "hang"`}, "--config", cfg, "--check")
	runPin(t, 0, []string{`removed tool "hang"`, "Recorded 1 change"}, "--config", cfg, "--yes")
	if lock, _ = readLockfile(t, lockPath); len(lock.Servers["chaos"]["tools"]) == 0 {
		t.Fatal("the lockfile lost chaos's tools")
	} else if _, ok := lock.Servers["chaos"]["tools"]["hang"]; ok {
		t.Error("the removed tool is still in the lockfile")
	}
	runPin(t, 0, []string{"Everything matches the lockfile"}, "--config", cfg, "--check")
}

// A lockfile that cannot be parsed is an error saying so, and is left as
// it is: it may hold what the user trusted.
func TestPinCorruptLockfile(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"chaos": chaosWithEnv(nil)}, nil)
	lockPath := lockfilePath(cfg)
	junk := []byte(`{"version": 1, "servers": {"chaos": `)
	if err := os.WriteFile(lockPath, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--yes"}, {"--check"}} {
		stdout, stderr, code := runCLI(t, pinRunTimeout, append([]string{"pin", "--config", cfg}, args...)...)
		if code != 1 || !strings.Contains(stderr, "the lockfile "+lockPath+" is corrupt") {
			t.Errorf("pin %s with a corrupt lockfile: exit %d\nstdout:\n%s\nstderr:\n%s", args[0], code, stdout, stderr)
		}
	}
	if data, _ := os.ReadFile(lockPath); !bytes.Equal(data, junk) {
		t.Errorf("the corrupt lockfile was changed:\n%s", data)
	}
}

// Servers named are the only ones compared and recorded; a name the config
// does not have is an error naming it; one that fails is reported and
// keeps its entries; two runs at once for different servers both land.
func TestPinSelectedServers(t *testing.T) {
	t.Parallel()
	servers := map[string]server{
		"one": chaosWithEnv(nil),
		"two": chaosWithEnv(map[string]string{"CHAOS_EXTRA_TOOL": "second"}),
	}
	cfg := writeConfig(t, servers, nil)
	lockPath := lockfilePath(cfg)

	_, stderr, code := runCLI(t, pinRunTimeout, "pin", "--config", cfg, "three")
	if code != 1 || !strings.Contains(stderr, `unknown server "three"`) {
		t.Errorf("pin of an unknown server: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(lockPath); err == nil {
		t.Error("pin of an unknown server wrote the lockfile")
	}

	// Two runs at once, one server each: both end up in the lockfile.
	runs := map[string]*cliRun{}
	for _, name := range []string{"one", "two"} {
		runs[name] = startCLI(t, "", "pin", name, "--yes", "--config", cfg)
	}
	for name, r := range runs {
		out, stderr, code := r.wait(t, pinRunTimeout)
		other := map[string]string{"one": "two", "two": "one"}[name]
		if code != 0 || !strings.Contains(out, `server "`+name+`": `) || !strings.Contains(out, "Recorded") || strings.Contains(out, `server "`+other+`"`) {
			t.Errorf("pin %s at once with pin %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, other, code, out, stderr)
		}
	}
	lock, _ := readLockfile(t, lockPath)
	if len(lock.Servers["one"]["tools"]) == 0 || lock.Servers["two"]["tools"]["second"].SHA256 == "" {
		t.Fatalf("after two runs at once the lockfile does not have both servers: %+v", lock.Servers)
	}
	runPin(t, 0, []string{"Everything matches the lockfile"}, "--config", cfg, "--check")

	// "two" now fails to start: reported, exit 1, its entries kept; "one"
	// changed and is recorded all the same.
	_, before := readLockfile(t, lockPath)
	var was lockfileDoc
	_ = json.Unmarshal(before, &was)
	servers["one"] = chaosWithEnv(map[string]string{"CHAOS_NO_HANG": "1"})
	servers["two"] = chaosServer("-mode", "exit")
	writeConfigAt(t, cfg, servers, nil)
	runPin(t, 1, []string{`server "two": failed to connect`, `removed tool "hang"`, "1 of 2 servers failed", "Recorded 1 change"},
		"--config", cfg, "--yes")
	lock, _ = readLockfile(t, lockPath)
	if _, ok := lock.Servers["one"]["tools"]["hang"]; ok {
		t.Error("one's removed tool is still pinned")
	}
	if a, b := lock.Servers["two"]["tools"]["second"].SHA256, was.Servers["two"]["tools"]["second"].SHA256; a == "" || a != b {
		t.Errorf("the failed server's entries changed: %q, was %q", a, b)
	}
	runPin(t, 1, []string{`server "two": failed to connect`, "Every server that connected matches the lockfile"}, "--config", cfg, "--check", "one", "two")
}
