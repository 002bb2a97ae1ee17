package config

import (
	"strings"
	"testing"
	"time"
)

// lazy and idleTimeout per server, their trunk-wide defaults, a server that
// overrides them either way, and errors naming the server and field.
func TestConfigLazyAndIdleTimeout(t *testing.T) {
	for _, tc := range []struct {
		name, server, trunk string
		lazy                bool
		idle                time.Duration
		wantErr             string
	}{
		{"default", `{"command":"x"}`, `{}`, false, 0, ""},
		{"server lazy", `{"command":"x","lazy":true,"idleTimeout":"10m"}`, `{}`, true, 10 * time.Minute, ""},
		{"trunk default", `{"command":"x"}`, `{"lazy":true,"idleTimeout":"90s"}`, true, 90 * time.Second, ""},
		{"server overrides trunk", `{"command":"x","lazy":false,"idleTimeout":"0s"}`, `{"lazy":true,"idleTimeout":"90s"}`, false, 0, ""},
		{"null is absent", `{"command":"x","lazy":null}`, `{"lazy":true}`, true, 0, ""},
		{"lazy not a boolean", `{"command":"x","lazy":"yes"}`, `{}`, false, 0, `server "s": lazy: want boolean, got string`},
		{"idle not a duration", `{"command":"x","idleTimeout":600}`, `{}`, false, 0, `server "s": idleTimeout: want a duration string`},
		{"idle negative", `{"command":"x","idleTimeout":"-1m"}`, `{}`, false, 0, `server "s": idleTimeout: duration must not be negative`},
		{"trunk lazy not a boolean", `{"command":"x"}`, `{"lazy":1}`, false, 0, `trunk.lazy: want boolean, got number`},
		{"trunk idle bad", `{"command":"x"}`, `{"idleTimeout":"soon"}`, false, 0, `trunk.idleTimeout: time: invalid duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseString(t, `{"mcpServers":{"s":`+tc.server+`},"trunk":`+tc.trunk+`}`, noEnv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := c.Servers[0]
			if s.Lazy != tc.lazy || s.IdleTimeout.D() != tc.idle {
				t.Errorf("lazy %v, idleTimeout %v; want %v, %v", s.Lazy, s.IdleTimeout.D(), tc.lazy, tc.idle)
			}
		})
	}
}
