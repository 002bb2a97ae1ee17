package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trunk.maxMessageBytes, its old name, and its default.
func TestConfigMaxMessageBytes(t *testing.T) {
	for _, tc := range []struct {
		trunk   string
		want    int
		wantErr string
	}{
		{`{}`, DefaultMaxMessageBytes, ""},
		{`{"maxMessageBytes": 20000000}`, 20_000_000, ""},
		{`{"maxResultBytes": 20000000}`, 20_000_000, ""},
		{`{"maxMessageBytes": 1000}`, 0, "trunk.maxMessageBytes: must be at least 65536, got 1000"},
		{`{"maxResultBytes": 1000}`, 0, "trunk.maxResultBytes: must be at least 65536, got 1000"},
		{`{"maxMessageBytes": 20000000, "maxResultBytes": 20000000}`, 0, "trunk.maxResultBytes: is the old name of trunk.maxMessageBytes: set only one of them"},
		{`{"maxMessageBytes": "big"}`, 0, "trunk.maxMessageBytes: want integer"},
	} {
		c, err := parseString(t, `{"mcpServers": {}, "trunk": `+tc.trunk+`}`, noEnv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Trunk.MaxMessageBytes != tc.want {
			t.Errorf("trunk %s: %v, %v; want maxMessageBytes %d", tc.trunk, c, err, tc.want)
		}
	}
	// The TypeScript SDK's stdio limit (10 MiB of buffered bytes) less one
	// 64 KiB pipe read: docs/host-limits.md.
	if DefaultMaxMessageBytes != 10_485_760-65_536 {
		t.Errorf("DefaultMaxMessageBytes = %d", DefaultMaxMessageBytes)
	}
}

// trunk.pin takes three modes (warn by default) and names a wrong one;
// trunk.lockFile is relative to the config's directory, and the lockfile
// sits beside the config when it is not set.
func TestConfigPinAndLockFile(t *testing.T) {
	for _, tc := range []struct {
		trunk, wantMode, wantErr string
	}{
		{`{}`, PinWarn, ""},
		{`{"pin": "off"}`, PinOff, ""},
		{`{"pin": "enforce"}`, PinEnforce, ""},
		{`{"pin": "strict"}`, "", `trunk.pin: must be "off", "warn" or "enforce", got "strict"`},
		{`{"pin": true}`, "", "trunk.pin: want string"},
		{`{"lockFile": 3}`, "", "trunk.lockFile: want string"},
	} {
		c, err := parseString(t, `{"mcpServers": {}, "trunk": `+tc.trunk+`}`, noEnv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Trunk.Pin != tc.wantMode {
			t.Errorf("trunk %s: %+v, %v; want pin %q", tc.trunk, c, err, tc.wantMode)
		}
	}
	dir := t.TempDir()
	for trunk, want := range map[string]string{
		`{}`:                                   filepath.Join(dir, LockFileName),
		`{"lockFile": "pins/trunk.lock.json"}`: filepath.Join(dir, "pins", "trunk.lock.json"),
		`{"lockFile": "/etc/mcptrunk.lock"}`:   "/etc/mcptrunk.lock",
	} {
		path := filepath.Join(dir, "mcptrunk.json")
		if err := os.WriteFile(path, []byte(`{"mcpServers": {}, "trunk": `+trunk+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil || c.Trunk.LockFile != want {
			t.Errorf("trunk %s: lockFile %q, %v; want %q", trunk, c.Trunk.LockFile, err, want)
		}
	}
}
