package config

import (
	"strings"
	"testing"
)

// namespace per server: absent and true namespace the server, false does
// not, anything else is an error naming the server and field.
func TestConfigNamespace(t *testing.T) {
	for _, tc := range []struct {
		name, server string
		unprefixed   bool
		wantErr      string
	}{
		{"default", `{"command":"x"}`, false, ""},
		{"true", `{"command":"x","namespace":true}`, false, ""},
		{"false", `{"command":"x","namespace":false}`, true, ""},
		{"remote", `{"url":"https://example.com/mcp","namespace":false}`, true, ""},
		{"null is absent", `{"command":"x","namespace":null}`, false, ""},
		{"a string", `{"command":"x","namespace":"no"}`, false, `server "s": namespace: want boolean, got string`},
		{"a number", `{"command":"x","namespace":0}`, false, `server "s": namespace: want boolean, got number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseString(t, `{"mcpServers":{"s":`+tc.server+`}}`, noEnv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Servers[0].Unprefixed(); got != tc.unprefixed {
				t.Errorf("Unprefixed() = %v, want %v", got, tc.unprefixed)
			}
		})
	}
}
