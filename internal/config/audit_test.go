package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trunk.audit: off when absent, the size default, and an error naming the
// field for each mistake.
func TestConfigAudit(t *testing.T) {
	for _, tc := range []struct {
		trunk   string
		want    Audit
		wantErr string
	}{
		{`{}`, Audit{}, ""},
		{`{"audit": null}`, Audit{}, ""},
		{`{"audit": {"file": "audit.jsonl"}}`, Audit{File: "audit.jsonl", MaxBytes: DefaultAuditMaxBytes}, ""},
		{`{"audit": {"file": "/var/log/a.jsonl", "arguments": true, "maxBytes": 1048576}}`, Audit{File: "/var/log/a.jsonl", Arguments: true, MaxBytes: 1 << 20}, ""},
		{`{"audit": {"file": "a", "maxBytes": 0}}`, Audit{File: "a", MaxBytes: DefaultAuditMaxBytes}, ""},
		{`{"audit": "audit.jsonl"}`, Audit{}, "trunk.audit: want object, got string"},
		{`{"audit": {}}`, Audit{}, "trunk.audit.file: is required"},
		{`{"audit": {"arguments": true}}`, Audit{}, "trunk.audit.file: is required"},
		{`{"audit": {"file": 3}}`, Audit{}, "trunk.audit.file: want string, got number"},
		{`{"audit": {"file": "a", "arguments": "yes"}}`, Audit{}, "trunk.audit.arguments: want boolean, got string"},
		{`{"audit": {"file": "a", "maxBytes": 100}}`, Audit{}, "trunk.audit.maxBytes: must be at least 65536, got 100"},
		{`{"audit": {"file": "a", "maxBytes": "10MB"}}`, Audit{}, "trunk.audit.maxBytes: want integer, got string"},
	} {
		c, err := parseString(t, `{"mcpServers": {}, "trunk": `+tc.trunk+`}`, noEnv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("trunk %s: error %v, want one containing %q", tc.trunk, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.Trunk.Audit != tc.want {
			t.Errorf("trunk %s: %+v, %v; want %+v", tc.trunk, c.Trunk.Audit, err, tc.want)
		}
	}
}

// A relative trunk.audit.file is relative to the config's directory, as
// trunk.lockFile is; an absolute one is kept.
func TestLoadAuditFile(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	for _, tc := range []struct{ file, want string }{
		{"audit.jsonl", filepath.Join(dir, "audit.jsonl")},
		{"logs/audit.jsonl", filepath.Join(dir, "logs", "audit.jsonl")},
		{abs, abs},
	} {
		path := filepath.Join(dir, "mcptrunk.json")
		file, _ := json.Marshal(tc.file)
		body := `{"mcpServers": {}, "trunk": {"audit": {"file": ` + string(file) + `}}}`
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Trunk.Audit.File != tc.want {
			t.Errorf("audit file %q: loaded as %q, want %q", tc.file, c.Trunk.Audit.File, tc.want)
		}
	}
}

// trunk.http.signingKeyFile is a path like tokenFile: relative to the
// config's directory; a value of another type is an error naming it.
func TestLoadSigningKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcptrunk.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {}, "trunk": {"http": {"signingKeyFile": "secrets/signing.key"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "secrets", "signing.key"); c.Trunk.HTTP.SigningKeyFile != want {
		t.Errorf("signingKeyFile loaded as %q, want %q", c.Trunk.HTTP.SigningKeyFile, want)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers": {}, "trunk": {"http": {"signingKeyFile": 5}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "trunk.http.signingKeyFile") {
		t.Errorf("a number for signingKeyFile: %v, want an error naming it", err)
	}
}
