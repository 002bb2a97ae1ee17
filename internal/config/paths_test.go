package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLoadSkipsTheTrunkItself: pointed at a host's file after mcptrunk
// install, the entry that runs mcptrunk is skipped with a note (it used to
// fail the load: name "trunk" is reserved), and the others load.
func TestLoadSkipsTheTrunkItself(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	doc := `{"globalShortcut": "", "mcpServers": {
		"trunk": {"command": "/usr/local/bin/mcptrunk", "args": ["serve", "--config", "/home/me/.config/mcptrunk/config.json"]},
		"old": {"command": "C:\\Tools\\MCPTRUNK.EXE"},
		"notes": {"command": "notes"},
		"remote": {"command": "mcptrunk", "args": ["connect", "https://example.com/mcp"]}
	}}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "notes,remote" {
		t.Errorf("servers %q, want notes and remote (mcptrunk connect is a server like any other)", names)
	}
	if len(cfg.Notes) != 2 || !strings.Contains(cfg.Notes[1], `server "trunk": skipped: it runs mcptrunk itself`) {
		t.Errorf("notes %q", cfg.Notes)
	}
	if len(cfg.Warnings) > 0 {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}

// TestLoadResolvesRelativePaths: a relative cwd, and a relative command
// that names a path, are the config directory's, not the current
// directory's; a bare command name is left for PATH.
func TestLoadResolvesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcptrunk.json")
	doc := `{"mcpServers": {
		"local": {"command": "./bin/server"},
		"inside": {"command": "./run.sh", "cwd": "srv"},
		"there": {"command": "bin/x", "cwd": "/opt/app"},
		"npx": {"command": "npx", "cwd": "work"},
		"abs": {"command": "/usr/bin/env"},
		"remote": {"url": "https://example.com/mcp"}
	}}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	// Load from another directory, by a relative path.
	t.Chdir(filepath.Dir(dir))
	cfg, err := Load(filepath.Join(filepath.Base(dir), "mcptrunk.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, s := range cfg.Servers {
		got[s.Name] = [2]string{s.Command, s.Cwd}
	}
	abs := "/opt/app"
	if runtime.GOOS == "windows" {
		abs = filepath.Join(dir, abs) // not absolute without a drive
	}
	want := map[string][2]string{
		"local":  {filepath.Join(dir, "bin", "server"), ""},
		"inside": {filepath.Join(dir, "srv", "run.sh"), filepath.Join(dir, "srv")},
		"there":  {filepath.Join(abs, "bin", "x"), abs},
		"npx":    {"npx", filepath.Join(dir, "work")},
		"abs":    {"/usr/bin/env", ""},
		"remote": {"", ""},
	}
	if runtime.GOOS == "windows" {
		delete(want, "abs")
		delete(got, "abs")
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: command, cwd = %q, want %q", name, got[name], w)
		}
	}
}

// TestDemoConfigNamesTheBuiltBinaries: make demo runs the demo config from
// the module root, and its relative commands resolve against the config's
// own directory, so they must lead to the bin/ that make build fills.
func TestDemoConfigNamesTheBuiltBinaries(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(filepath.Join(root, "testdata", "demo", "mcptrunk.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) == 0 {
		t.Fatal("the demo config has no servers")
	}
	for _, s := range cfg.Servers {
		if want := filepath.Join(root, "bin", "mcptrunk-"+s.Name); s.Command != want {
			t.Errorf("server %q runs %s, want %s (what make build writes)", s.Name, s.Command, want)
		}
	}
}
