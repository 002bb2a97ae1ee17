package hostcfg

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteConfigRestoresOnInvalid: a result that does not validate puts
// the config back as it was, and says why.
func TestWriteConfigRestoresOnInvalid(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcptrunk.json")
	orig := []byte(`{"mcpServers": {"a": {"command": "a"}}}`)
	if err := os.WriteFile(cfg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	plan := AddPlan(cfg, orig, []Server{{Name: "b", Entry: json.RawMessage(`{"command": 5}`)}})
	var out bytes.Buffer
	err := plan.WriteConfig(&out)
	if err == nil || !strings.Contains(err.Error(), "does not validate") || !strings.Contains(err.Error(), `server "b": command`) {
		t.Errorf("error: %v", err)
	}
	if b, _ := os.ReadFile(cfg); !bytes.Equal(b, orig) {
		t.Errorf("the config was not put back: %s", b)
	}
	if m, _ := filepath.Glob(cfg + ".bak-*"); len(m) != 1 {
		t.Errorf("backups: %q", m)
	}
}

// TestImportNamesFilesLookedFor: an import that finds no host's file says
// which files it looked for, so that a host keeping its file elsewhere can
// be named.
func TestImportNamesFilesLookedFor(t *testing.T) {
	dir := t.TempDir()
	env := Env{GOOS: "linux", Home: dir, Project: filepath.Join(dir, "p"), Getenv: func(string) string { return "" }}
	locs, err := LocationsFor("", env)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanImport(filepath.Join(dir, "config.json"), locs, env, false)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	plan.Print(&out)
	for _, want := range []string{"No host's file was found. Looked for:", filepath.Join(dir, ".claude.json"), filepath.Join(dir, ".cursor", "mcp.json"), "--from HOST:FILE", "0 servers to add."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
