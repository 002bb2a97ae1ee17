package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// TestSearch: the registry's servers that match, with how each runs and
// its status (deprecated and deleted marked), over pages.
func TestSearch(t *testing.T) {
	t.Parallel()
	reg := testkit.StartRegistry(t, 2)
	stdout, stderr, code := runCLI(t, 30*time.Second, "search", "example", "--registry", reg.URL)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"io.github.example/weather", "1.4.2", "npm", "io.github.example/sqlite", "deprecated",
		"io.github.example/old-notes", "deleted", "com.example/tickets", "websocket,streamable-http", "oci",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("search lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = runCLI(t, 30*time.Second, "search", "nothing-like-this", "--registry", reg.URL)
	if code != 0 || !strings.Contains(stdout, `No server of `+reg.URL+` matches "nothing-like-this"`) {
		t.Errorf("no match: exit %d\n%s", code, stdout)
	}
}

// TestAdd: add writes the entry, pinned, its values as ${VAR} references,
// into a config whose other bytes stay; --dry-run writes nothing; a
// name the registry lacks, a deleted server and a taken name are refused
// naming them.
func TestAdd(t *testing.T) {
	t.Parallel()
	reg := testkit.StartRegistry(t, 10)
	cfg := filepath.Join(t.TempDir(), "mcptrunk.json")
	before := "{\n  \"trunk\": {\"concurrency\": 4},\n  \"mcpServers\": {\n    \"notes\": {\"command\": \"notes\"}\n  }\n}\n"
	if err := os.WriteFile(cfg, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, 30*time.Second, "add", "io.github.example/weather", "--registry", reg.URL, "--config", cfg, "--dry-run")
	if code != 0 || !strings.Contains(stdout, `"weather"`) || !strings.Contains(stdout, "WEATHER_API_KEY (required, secret") || !strings.Contains(stdout, "--dry-run") {
		t.Errorf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(cfg); string(b) != before {
		t.Errorf("--dry-run wrote the config:\n%s", b)
	}

	stdout, stderr, code = runCLI(t, 30*time.Second, "add", "io.github.example/weather@1.4.2", "--registry", reg.URL, "--config", cfg)
	if code != 0 {
		t.Fatalf("add: exit %d\n%s\n%s", code, stdout, stderr)
	}
	after, _ := os.ReadFile(cfg)
	if !strings.HasPrefix(string(after), "{\n  \"trunk\": {\"concurrency\": 4},\n  \"mcpServers\": {\n    \"notes\": {\"command\": \"notes\"}") {
		t.Errorf("what the config had did not stay as it was:\n%s", after)
	}
	for _, want := range []string{`"notes"`, `"weather"`, `"@example/weather-mcp@1.4.2"`, `"${WEATHER_API_KEY}"`} {
		if !strings.Contains(string(after), want) {
			t.Errorf("the config lacks %s:\n%s", want, after)
		}
	}

	for _, c := range []struct{ args, want string }{
		{"io.github.example/nothing", `the registry has no server named "io.github.example/nothing"`},
		{"io.github.example/sqlite@9.9.9", `the registry has no version 9.9.9 of "io.github.example/sqlite"`},
		{"io.github.example/old-notes", "was deleted from the registry"},
		{"io.github.example/weather", `already has a server named "weather"`},
		{"io.github.example/local-http", "local port"},
	} {
		_, stderr, code := runCLI(t, 30*time.Second, "add", c.args, "--registry", reg.URL, "--config", cfg)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("add %s: exit %d, want 1 saying %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}
