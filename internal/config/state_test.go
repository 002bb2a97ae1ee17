package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateParse: trunk.state reaches TrunkOptions expanded, defaulting
// to fail closed; absent, it is not configured.
func TestStateParse(t *testing.T) {
	env := func(name string) (string, bool) {
		v, ok := map[string]string{"REDIS_URL": "redis://:hunter2@127.0.0.1:6379/2", "KEYS": "/etc/mcptrunk"}[name]
		return v, ok
	}
	cfg, err := Parse(strings.NewReader(`{"mcpServers": {}, "trunk": {"state": {"url": "${REDIS_URL}", "keyFile": "${KEYS}/state.key"}}}`), env)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Trunk.State
	if !s.Configured || !s.Redis() || s.URL != "redis://:hunter2@127.0.0.1:6379/2" || s.KeyFile != "/etc/mcptrunk/state.key" || s.OnUnavailable != StateRefuse {
		t.Errorf("state: %+v", s)
	}
	if w := s.Where(); strings.Contains(w, "hunter2") || !strings.Contains(w, "127.0.0.1:6379/2") {
		t.Errorf("Where() = %q, want the URL without its password", w)
	}
	cfg, err = Parse(strings.NewReader(`{"mcpServers": {}, "trunk": {"state": {"path": "s.db", "onUnavailable": "allow"}}}`), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Trunk.State; !s.Configured || s.Redis() || s.Path != "s.db" || s.OnUnavailable != StateAllow {
		t.Errorf("state: %+v", s)
	}
	cfg, err = Parse(strings.NewReader(`{"mcpServers": {}}`), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Trunk.State.Configured {
		t.Errorf("state without trunk.state: %+v, want not configured", cfg.Trunk.State)
	}
}

// TestStateParseErrors: each mistake names its field, and a bad URL is
// refused without quoting it (it may hold a password).
func TestStateParseErrors(t *testing.T) {
	for _, c := range []struct{ cfg, want string }{
		{`{"url": "http://:secretpw@host:1"}`, "trunk.state.url: must be a Redis URL"},
		{`{"url": "redis://h:1", "path": "x"}`, "trunk.state.path: is the embedded store's file and url a Redis server's: set only one of them"},
		{`{"previousKeyFile": "old.key"}`, "trunk.state.previousKeyFile: is the key keyFile replaced: set keyFile too"},
		{`{"onUnavailable": "open"}`, `trunk.state.onUnavailable: must be "refuse" or "allow", got "open"`},
		{`{"keyFile": "${NOPE}"}`, `trunk.state.keyFile: variable "NOPE" is not set`},
		{`{"keyFile": 3}`, "trunk.state.keyFile"},
		{`[]`, "trunk.state"},
	} {
		_, err := Parse(strings.NewReader(`{"mcpServers": {}, "trunk": {"state": `+c.cfg+`}}`), noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.cfg, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s: the error quotes the password: %v", c.cfg, err)
		}
	}
}

// TestStatePathsRelativeToConfig: a loaded config's state file and key
// files are found beside it, as trunk.lockFile is.
func TestStatePathsRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcptrunk.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {}, "trunk": {"state": {"path": "s.db", "keyFile": "k", "previousKeyFile": "/abs/old"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Trunk.State; s.Path != filepath.Join(dir, "s.db") || s.KeyFile != filepath.Join(dir, "k") || s.PreviousKeyFile != "/abs/old" {
		t.Errorf("state: %+v", s)
	}
}
