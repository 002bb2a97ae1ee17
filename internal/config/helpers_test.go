package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const configDir = "../../testdata/config"

func noEnv(string) (string, bool) { return "", false }

func parseString(t *testing.T, s string, lookup func(string) (string, bool)) (*Config, error) {
	t.Helper()
	return ParseAll(strings.NewReader(s), lookup)
}

func parseFile(t *testing.T, name string, lookup func(string) (string, bool)) (*Config, error) {
	t.Helper()
	f, err := os.Open(filepath.Join(configDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ParseAll(f, lookup)
}

func defaultTimeouts() Timeouts {
	return Timeouts{Connect: Duration(30 * time.Second), List: Duration(30 * time.Second), Call: Duration(120 * time.Second), Restart: Duration(10 * time.Second)}
}

func defaultTrunk() TrunkOptions {
	return TrunkOptions{StartupWait: Duration(15 * time.Second), Concurrency: DefaultConcurrency, MaxNameLength: 64, Prefix: "mcp__", MaxMessageBytes: DefaultMaxMessageBytes, Pin: PinWarn}
}
