package hostcfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostFile is a Claude Desktop file in a fresh directory holding data.
func hostFile(t *testing.T, data string) Location {
	t.Helper()
	loc := location(t, "claude-desktop", ScopeUser)
	loc.Path = filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(loc.Path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return loc
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Install backs the file up and writes the edit; a second install is
// refused while the backup is there; Uninstall puts the bytes back and
// removes the backup, and without one says it is not installed.
func TestInstallUninstallFiles(t *testing.T) {
	const orig = `{"mcpServers": {"a": {"command": "a"}}}`
	loc := hostFile(t, orig)
	data, _, err := ReadToInstall(loc, testEnv)
	if err != nil || string(data) != orig {
		t.Fatalf("ReadToInstall: %q, %v", data, err)
	}
	out, err := Install(loc, data, SelfName, "/bin/mcptrunk", selfArgs, nil)
	if err != nil || readString(t, loc.Path) != string(out) || readString(t, BackupPath(loc.Path)) != orig {
		t.Fatalf("Install: %v; file %s", err, readString(t, loc.Path))
	}
	if _, _, err := ReadToInstall(loc, testEnv); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Errorf("a second install: %v", err)
	}
	u, err := Uninstall(loc, time.Now())
	if err != nil || !u.Exact || u.Kept != "" || readString(t, loc.Path) != orig {
		t.Errorf("Uninstall: %+v, %v; file %s", u, err, readString(t, loc.Path))
	}
	if _, err := os.Stat(BackupPath(loc.Path)); !os.IsNotExist(err) {
		t.Errorf("the backup is still there: %v", err)
	}
	if _, err := Uninstall(loc, time.Now()); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("uninstall with no backup: %v", err)
	}
}

// An entry changed since install keeps its change, and the backup, which
// alone holds the earlier entry, is kept under a name of its own.
func TestUninstallKeepsBackupOfChanged(t *testing.T) {
	const orig = `{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}`
	loc := hostFile(t, orig)
	out, err := Install(loc, []byte(orig), SelfName, "/bin/mcptrunk", selfArgs, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(out), `"command": "b"`, `"command": "b2"`, 1)
	if err := os.WriteFile(loc.Path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := Uninstall(loc, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil || strings.Join(u.Changed, ",") != "b" || !strings.HasSuffix(u.Kept, ".mcptrunk-backup.20260102T030405Z") {
		t.Fatalf("Uninstall: %+v, %v", u, err)
	}
	if readString(t, u.Kept) != orig || !strings.Contains(readString(t, loc.Path), `"b2"`) {
		t.Errorf("kept backup %s; file %s", readString(t, u.Kept), readString(t, loc.Path))
	}
}

// A file that is missing or does not parse is refused before anything is
// written; a failed write leaves no backup behind.
func TestInstallFilesRefuse(t *testing.T) {
	loc := hostFile(t, `{"mcpServers": {`)
	if _, _, err := ReadToInstall(loc, testEnv); err == nil || !strings.Contains(err.Error(), "cannot be parsed") {
		t.Errorf("a file that does not parse: %v", err)
	}
	loc.Path += ".missing"
	if data, created, err := ReadToInstall(loc, testEnv); err != nil || !created || string(data) != "{}\n" {
		t.Errorf("no file: %q, %v, %v; want an empty object to create", data, created, err)
	}
	loc.Path = filepath.Join(t.TempDir(), "dir")
	if err := os.Mkdir(loc.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(loc, []byte(`{}`), SelfName, "/bin/mcptrunk", selfArgs, nil); err == nil {
		t.Fatal("Install over a directory: no error")
	}
	if _, err := os.Stat(BackupPath(loc.Path)); !os.IsNotExist(err) {
		t.Errorf("a failed install left its backup: %v", err)
	}
}

// PrintUnusable names each server that will not start and why, and says
// nothing when every server can start.
func TestPrintUnusable(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers": {"ok": {"command": "x"}, "gh": {"command": "x", "env": {"T": "${MCPTRUNK_TEST_UNSET_VAR}"}}}}`)
	var b strings.Builder
	PrintUnusable(&b, cfg, "Cursor")
	if out := b.String(); !strings.Contains(out, "where Cursor starts mcptrunk") || !strings.Contains(out, "  gh: ") || strings.Contains(out, "ok:") {
		t.Errorf("PrintUnusable:\n%s", out)
	}
	write(`{"mcpServers": {"ok": {"command": "x"}}}`)
	b.Reset()
	if PrintUnusable(&b, cfg, "Cursor"); b.Len() != 0 {
		t.Errorf("every server usable, yet:\n%s", b.String())
	}
}
