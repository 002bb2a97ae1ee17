package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUnknownKeysWarn: misspelt keys are warnings naming the file, the
// server and the key probably meant; the keys hosts keep in the same file
// are not.
func TestUnknownKeysWarn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcptrunk.json")
	doc := `{
  "globalShortcut": "Alt+Space",
  "preferences": {"menuBarEnabled": false},
  "mcpservers": {},
  "mcpServers": {
    "files": {"command": "files", "arg": ["/tmp"], "enviroment": {"K": "v"}, "dissabled": true, "lazzy": true, "frobnicate": 1,
      "timeouts": {"conect": "5s", "restrat": "1s"}, "tools": {"alow": ["x"]}},
    "cursor": {"command": "c", "envFile": ".env", "autoApprove": ["x"], "alwaysAllow": [], "timeout": 60, "disabledTools": []}
  },
  "trunk": {"toolsearch": true, "audit": {"file": "a.log", "argument": true}, "codeMode": {"enable": true}}
}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`unknown key "mcpservers" (did you mean "mcpServers"?), ignored`,
		`unknown key "trunk.toolsearch" (did you mean "trunk.toolSearch"?), ignored`,
		`unknown key "trunk.audit.argument" (did you mean "trunk.audit.arguments"?), ignored`,
		`unknown key "trunk.codeMode.enable" (did you mean "trunk.codeMode.enabled"?), ignored`,
		`server "files": unknown key "arg" (did you mean "args"?), ignored`,
		`server "files": unknown key "enviroment" (did you mean "env"?), ignored`,
		`server "files": unknown key "dissabled" (did you mean "disabled"?), ignored`,
		`server "files": unknown key "lazzy" (did you mean "lazy"?), ignored`,
		`server "files": unknown key "frobnicate", ignored`,
		`server "files": unknown key "timeouts.conect" (did you mean "timeouts.connect"?), ignored`,
		`server "files": unknown key "timeouts.restrat" (did you mean "timeouts.restart"?), ignored`,
		`server "files": unknown key "tools.alow" (did you mean "tools.allow"?), ignored`,
	}
	for i := range want {
		want[i] = path + ": " + want[i]
	}
	if !slices.Equal(cfg.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(want, "\n"))
	}

	// Claude Desktop's own file, as docs/hosts.md suggests using it, warns of
	// nothing.
	cd, err := Load(filepath.Join(configDir, "claude_desktop_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cd.Warnings) > 0 {
		t.Errorf("Claude Desktop's file: %q", cd.Warnings)
	}
}
