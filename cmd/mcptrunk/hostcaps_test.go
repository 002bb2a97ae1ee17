package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestListAsHost: list --as-host shows the tools a host that can sample,
// elicit and give roots is offered, which plain list (a host that
// declares nothing) does not see.
func TestListAsHost(t *testing.T) {
	t.Parallel()
	everything := server{"command": npmNode(t), "args": []string{npmScript(t, everythingPkg), "stdio"}, "timeouts": slowTimeouts}
	cfg := writeConfig(t, map[string]server{"everything": everything}, nil)
	capable := []string{"mcp__everything__trigger-sampling-request", "mcp__everything__trigger-elicitation-request", "mcp__everything__get-roots-list"}
	stdout, stderr, code := runCLI(t, 2*time.Minute, "list", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "mcp__everything__echo") {
		t.Fatalf("list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range capable {
		if strings.Contains(stdout, name) {
			t.Errorf("plain list shows %s", name)
		}
	}
	stdout, stderr, code = runCLI(t, 2*time.Minute, "list", "--as-host", "--config", cfg)
	if code != 0 {
		t.Fatalf("list --as-host: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range capable {
		if !strings.Contains(stdout, name) {
			t.Errorf("list --as-host lacks %s:\n%s", name, stdout)
		}
	}
}

// pinConfig writes, into dir, a config with notes and a chaos server whose
// environment is env, under trunk.pin mode (and extra trunk options).
func pinConfig(t *testing.T, dir, mode string, env map[string]string, trunk map[string]any) string {
	t.Helper()
	chaos := chaosServer("-mode", "ok", "-max-life", "100s")
	chaos["env"] = env
	opts := map[string]any{"pin": mode}
	for k, v := range trunk {
		opts[k] = v
	}
	path := filepath.Join(dir, "mcptrunk.json")
	writeConfigAt(t, path, map[string]server{"chaos": chaos, "notes": notesServer()}, opts)
	return path
}

// TestPinFirstSightWholeCatalog: serve records a server seen for the first
// time once it has listed everything, not when its tools are in and its
// resources still being listed.
func TestPinFirstSightWholeCatalog(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	dir := t.TempDir()
	s := connectTrunk(t, ctx, pinConfig(t, dir, "warn", map[string]string{"CHAOS_LIST_DELAY": "2s"}, nil))
	defer s.Close()
	lock := filepath.Join(dir, "mcptrunk.lock.json")
	var data []byte
	if err := eventually(ctx, 20*time.Millisecond, func() error {
		var err error
		if data, err = os.ReadFile(lock); err != nil || !strings.Contains(string(data), `"chaos"`) {
			return fmt.Errorf("the lockfile does not hold the chaos server yet: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, tail(s.stderr.String(), 2000))
	}
	if !strings.Contains(string(data), `"chaos://state"`) {
		t.Errorf("the chaos server was recorded without its resources:\n%s", data)
	}
}
