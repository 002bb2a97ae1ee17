package config

import (
	"strings"
	"testing"
)

func TestConfigProtocolVersion(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{``, ""},
		{`"protocolVersion": null,`, ""},
		{`"protocolVersion": "",`, ""},
		{`"protocolVersion": "2025-11-25",`, "2025-11-25"},
		{`"protocolVersion": "2025-03-26",`, "2025-03-26"},
		{`"protocolVersion": "2026-07-28",`, "2026-07-28"},
	} {
		cfg, err := parseString(t, `{"mcpServers": {"x": {`+tc.value+` "command": "srv"}}}`, noEnv)
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		if got := cfg.Servers[0].ProtocolVersion; got != tc.want {
			t.Errorf("%s: ProtocolVersion = %q, want %q", tc.value, got, tc.want)
		}
	}
}

func TestConfigProtocolVersionErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{`"2026-01-01"`, `server "x": protocolVersion: unknown revision "2026-01-01" (want 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, or leave it out to negotiate)`},
		{`"latest"`, `server "x": protocolVersion: unknown revision "latest"`},
		{`20260728`, `server "x": protocolVersion: want string, got number`},
	} {
		_, err := parseString(t, `{"mcpServers": {"x": {"protocolVersion": `+tc.value+`, "command": "srv"}}}`, noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want it to contain %q", tc.value, err, tc.want)
		}
	}
}
