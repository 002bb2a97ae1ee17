package config

import (
	"strings"
	"testing"
)

// scope per server: absent and "shared" share one instance, "session"
// gives each host session its own, "caller" each caller, anything else is
// an error naming the server and field.
func TestConfigScope(t *testing.T) {
	for _, tc := range []struct {
		name, server string
		perSession   bool
		perCaller    bool
		wantErr      string
	}{
		{"default", `{"command":"x"}`, false, false, ""},
		{"shared", `{"command":"x","scope":"shared"}`, false, false, ""},
		{"session", `{"command":"x","scope":"session"}`, true, false, ""},
		{"caller", `{"command":"x","scope":"caller"}`, false, true, ""},
		{"unknown", `{"command":"x","scope":"host"}`, false, false, `server "s": scope: must be "shared", "caller" or "session", got "host"`},
		{"a number", `{"command":"x","scope":1}`, false, false, `server "s": scope: want string, got number`},
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
			if got := c.Servers[0].PerSession(); got != tc.perSession {
				t.Errorf("PerSession() = %v, want %v", got, tc.perSession)
			}
			if got := c.Servers[0].PerCaller(); got != tc.perCaller {
				t.Errorf("PerCaller() = %v, want %v", got, tc.perCaller)
			}
		})
	}
}

// trunk.http: each field checked and named.
func TestConfigHTTP(t *testing.T) {
	c, err := parseString(t, `{"mcpServers":{},"trunk":{"http":{"listen":"127.0.0.1:8931","path":"/x","allowedOrigins":["https://app.example.com"],"maxSessions":3,"sessionIdleTimeout":"5m",
		"maxSessionsPerClient":2,"maxBufferedBytes":1000000,"maxSessionBufferedBytes":100000,"maxConnections":40,"maxConnectionsPerClient":10,"handshakeTimeout":"5s","idleTimeout":"20s","bodyTimeout":"3s"}}}`, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Trunk.HTTP; h.Listen != "127.0.0.1:8931" || h.Path != "/x" || h.MaxSessions != 3 || h.SessionIdle.D().Minutes() != 5 || len(h.AllowedOrigins) != 1 ||
		h.MaxSessionsPerClient != 2 || h.MaxBufferedBytes != 1000000 || h.MaxSessionBufferedBytes != 100000 || h.MaxConnections != 40 || h.MaxConnectionsPerClient != 10 ||
		h.HandshakeTimeout.D().Seconds() != 5 || h.IdleTimeout.D().Seconds() != 20 || h.BodyTimeout.D().Seconds() != 3 {
		t.Errorf("trunk.http = %+v", h)
	}
	for _, tc := range []struct{ http, want string }{
		{`{"listen":"8931"}`, `trunk.http.listen: must be HOST:PORT`},
		{`{"path":"mcp"}`, `trunk.http.path: must be a URL path`},
		{`{"allowedOrigins":["https://app.example.com/page"]}`, `trunk.http.allowedOrigins: must be origins`},
		{`{"maxSessions":-1}`, `trunk.http.maxSessions: must not be negative`},
		{`{"sessionIdleTimeout":"soon"}`, `trunk.http.sessionIdleTimeout`},
		{`{"maxBufferedBytes":-1}`, `trunk.http.maxBufferedBytes: must not be negative`},
		{`{"maxConnectionsPerClient":"many"}`, `trunk.http.maxConnectionsPerClient: want integer`},
		{`{"bodyTimeout":"slow"}`, `trunk.http.bodyTimeout`},
		{`{"listen":1}`, `trunk.http.listen: want string`},
	} {
		_, err := parseString(t, `{"mcpServers":{},"trunk":{"http":`+tc.http+`}}`, noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("trunk.http %s: error %v, want one containing %q", tc.http, err, tc.want)
		}
	}
}
