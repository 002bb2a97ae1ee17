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
