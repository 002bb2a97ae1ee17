package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil || len(c.Servers) != 1 || c.Servers[0].Name != "a" {
		t.Fatalf("Load = %+v, %v", c, err)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err = Load(missing)
	if err == nil || !strings.HasPrefix(err.Error(), missing+": ") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) = %v", err)
	}
	if strings.Count(err.Error(), missing) != 1 {
		t.Errorf("path repeated in %q", err)
	}

	bad := filepath.Join(configDir, "bad_many.json")
	_, err = Load(bad)
	if err == nil {
		t.Fatal("Load(bad_many) succeeded")
	}
	for line := range strings.Lines(err.Error()) {
		if !strings.HasPrefix(line, bad+": ") {
			t.Errorf("line %q is not prefixed with the path", line)
		}
	}

	syntax := filepath.Join(configDir, "bad_syntax.json")
	_, err = Load(syntax)
	if err == nil || !strings.HasPrefix(err.Error(), syntax+": invalid JSON at line 3, column 32") {
		t.Fatalf("Load(bad_syntax) = %v", err)
	}
}

func TestConfigLoadUsesEnvironment(t *testing.T) {
	t.Setenv("MCPTRUNK_TEST_TOKEN", "abc")
	p := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {"a": {"url": "https://e.com", "headers": {"T": "${MCPTRUNK_TEST_TOKEN}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[0].Headers["T"]; got != "abc" {
		t.Fatalf("header = %q", got)
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		files   []string
		want    string
		wantErr []string
	}{
		{name: "flag wins", flag: "/etc/x.json", env: map[string]string{"MCPTRUNK_CONFIG": "/env.json", "HOME": "/home/u"},
			files: []string{"./mcptrunk.json"}, want: "/etc/x.json"},
		{name: "flag not checked for existence", flag: "nope.json", want: "nope.json"},
		{name: "env var next", env: map[string]string{"MCPTRUNK_CONFIG": "/env.json", "HOME": "/home/u"},
			files: []string{"./mcptrunk.json"}, want: "/env.json"},
		{name: "local file next", env: map[string]string{"HOME": "/home/u"},
			files: []string{"./mcptrunk.json", "/home/u/.config/mcptrunk/config.json"}, want: "./mcptrunk.json"},
		{name: "xdg config home", env: map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/xdg"},
			files: []string{"/xdg/mcptrunk/config.json", "/home/u/.config/mcptrunk/config.json"}, want: "/xdg/mcptrunk/config.json"},
		{name: "home default", env: map[string]string{"HOME": "/home/u"},
			files: []string{"/home/u/.config/mcptrunk/config.json"}, want: "/home/u/.config/mcptrunk/config.json"},
		{name: "relative xdg ignored", env: map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "rel"},
			files: []string{"rel/mcptrunk/config.json", "/home/u/.config/mcptrunk/config.json"}, want: "/home/u/.config/mcptrunk/config.json"},
		{name: "nothing found", env: map[string]string{"HOME": "/home/u"},
			wantErr: []string{"no config file found", "MCPTRUNK_CONFIG", "./mcptrunk.json", "/home/u/.config/mcptrunk/config.json"}},
		{name: "nothing found with xdg", env: map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/xdg"},
			wantErr: []string{"./mcptrunk.json", "/xdg/mcptrunk/config.json"}},
		{name: "nothing found without home", wantErr: []string{"./mcptrunk.json", "neither XDG_CONFIG_HOME nor HOME is set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			exists := func(p string) bool {
				for _, f := range tt.files {
					if filepath.FromSlash(f) == p {
						return true
					}
				}
				return false
			}
			got, err := Resolve(tt.flag, getenv, exists)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Resolve = %q, want error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), filepath.FromSlash(w)) && !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != filepath.FromSlash(tt.want) && got != tt.want {
				t.Fatalf("Resolve = %q, want %q", got, tt.want)
			}
		})
	}
}
