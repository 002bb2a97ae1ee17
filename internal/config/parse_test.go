package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestConfigParseGood(t *testing.T) {
	tests := []struct {
		file   string
		lookup func(string) (string, bool)
		want   *Config
	}{
		{
			file:   "example.json",
			lookup: mapLookup(map[string]string{"HOME": "/home/alice", "TOKEN": "tok123"}),
			want: &Config{
				Servers: []Spec{
					{
						Name: "files", Type: TransportStdio, Command: "npx",
						Args:     []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/alice/src"},
						Env:      map[string]string{"LOG_LEVEL": "info"},
						Cwd:      "/tmp",
						Timeouts: defaultTimeouts(),
					},
					{
						Name: "github", Type: TransportStdio, Command: "github-mcp", Disabled: true,
						Tools:         Filter{Allow: []string{"get_*", "list_*"}, Deny: []string{"delete_*"}},
						ReadOnlyTools: []string{"search_code"},
						Timeouts:      defaultTimeouts(),
					},
					{Name: "legacy", Type: TransportSSE, URL: "http://127.0.0.1:8080/sse", Timeouts: defaultTimeouts()},
					{
						Name: "remote", Type: TransportHTTP, URL: "https://example.com/mcp",
						Headers:  map[string]string{"Authorization": "Bearer tok123"},
						Timeouts: defaultTimeouts(),
					},
				},
				Trunk: func() TrunkOptions { o := defaultTrunk(); o.Concurrency = 8; return o }(), // set in the file
			},
		},
		{
			file:   "minimal.json",
			lookup: noEnv,
			want: &Config{
				Servers: []Spec{{Name: "echo", Type: TransportStdio, Command: "echo-mcp", Timeouts: defaultTimeouts()}},
				Trunk:   defaultTrunk(),
			},
		},
		{
			// Claude Desktop's own file parses unchanged: other top-level
			// keys and per-server unknown keys are ignored, "$" without
			// braces is left alone, "env": {} is fine.
			file:   "claude_desktop_config.json",
			lookup: noEnv,
			want: &Config{
				Servers: []Spec{
					{
						Name: "brave-search", Type: TransportStdio, Command: "npx",
						Args:     []string{"-y", "@modelcontextprotocol/server-brave-search"},
						Env:      map[string]string{"BRAVE_API_KEY": "BSA-not-a-real-key"},
						Timeouts: defaultTimeouts(),
					},
					{
						Name: "filesystem", Type: TransportStdio, Command: "npx",
						Args:     []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"},
						Timeouts: defaultTimeouts(),
					},
					{
						Name: "sqlite", Type: TransportStdio, Command: "uvx",
						Args:     []string{"mcp-server-sqlite", "--db-path", `C:\Users\alice\$work\test.db`},
						Timeouts: defaultTimeouts(),
					},
					{
						Name: "weather", Type: TransportStdio, Command: "node",
						Args:     []string{"/Users/alice/weather/build/index.js"},
						Timeouts: defaultTimeouts(),
					},
				},
				Trunk: defaultTrunk(),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := parseFile(t, tt.file, tt.lookup)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(got.Servers) != len(tt.want.Servers) {
				t.Fatalf("got %d servers, want %d: %+v", len(got.Servers), len(tt.want.Servers), got.Servers)
			}
			for i := range got.Servers {
				if !got.Servers[i].Equal(tt.want.Servers[i]) {
					t.Errorf("server %d:\n got %+v\nwant %+v", i, got.Servers[i], tt.want.Servers[i])
				}
			}
			if !reflect.DeepEqual(got.Trunk, tt.want.Trunk) {
				t.Errorf("trunk = %+v, want %+v", got.Trunk, tt.want.Trunk)
			}
		})
	}
}

func TestConfigParseInline(t *testing.T) {
	env := mapLookup(map[string]string{"PORT": "9000", "DIR": "/srv", "BIN": "/usr/bin/srv", "EMPTY": ""})
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, c *Config)
	}{
		{"empty object", `{}`, func(t *testing.T, c *Config) {
			if len(c.Servers) != 0 || !reflect.DeepEqual(c.Trunk, defaultTrunk()) {
				t.Errorf("got %+v", c)
			}
		}},
		{"empty mcpServers", `{"mcpServers": {}}`, func(t *testing.T, c *Config) {
			if len(c.Servers) != 0 {
				t.Errorf("got %+v", c.Servers)
			}
		}},
		{"null mcpServers and trunk", `{"mcpServers": null, "trunk": null}`, func(t *testing.T, c *Config) {
			if len(c.Servers) != 0 || !reflect.DeepEqual(c.Trunk, defaultTrunk()) {
				t.Errorf("got %+v", c)
			}
		}},
		{"utf-8 BOM", "\uFEFF" + `{"mcpServers": {"a": {"command": "x"}}}`, func(t *testing.T, c *Config) {
			if len(c.Servers) != 1 {
				t.Errorf("got %+v", c.Servers)
			}
		}},
		{"sorted by name", `{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "Mid": {"command": "m"}}}`, func(t *testing.T, c *Config) {
			var names []string
			for _, s := range c.Servers {
				names = append(names, s.Name)
			}
			if got := strings.Join(names, ","); got != "Mid,alpha,zeta" {
				t.Errorf("names = %s", got)
			}
		}},
		{"type defaults and aliases", `{"mcpServers": {
			"a": {"command": "x"},
			"b": {"url": "https://e.com/mcp"},
			"c": {"type": "streamable-http", "url": "https://e.com/mcp"},
			"d": {"type": "streamableHttp", "url": "https://e.com/mcp"},
			"e": {"type": "streamable_http", "url": "https://e.com/mcp"},
			"f": {"type": "SSE", "url": "http://e.com/sse"},
			"g": {"type": "stdio", "command": "x"},
			"h": {"type": "", "command": "x"}}}`, func(t *testing.T, c *Config) {
			want := []Transport{TransportStdio, TransportHTTP, TransportHTTP, TransportHTTP, TransportHTTP, TransportSSE, TransportStdio, TransportStdio}
			for i, s := range c.Servers {
				if s.Type != want[i] {
					t.Errorf("server %s: type %q, want %q", s.Name, s.Type, want[i])
				}
			}
		}},
		{"expansion in every field", `{"mcpServers": {
			"a": {"command": "${BIN}", "args": ["--port=${PORT}", "$PORT"], "env": {"P": "${PORT}", "E": "${EMPTY:-dflt}"}, "cwd": "${DIR}/work"},
			"b": {"url": "http://localhost:${PORT}/mcp", "headers": {"X-Port": "${PORT}"}}}}`, func(t *testing.T, c *Config) {
			a, b := c.Servers[0], c.Servers[1]
			want := Spec{Name: "a", Type: TransportStdio, Command: "/usr/bin/srv", Args: []string{"--port=9000", "$PORT"},
				Env: map[string]string{"P": "9000", "E": "dflt"}, Cwd: "/srv/work", Timeouts: defaultTimeouts()}
			if !a.Equal(want) {
				t.Errorf("a = %+v", a)
			}
			if b.URL != "http://localhost:9000/mcp" || b.Headers["X-Port"] != "9000" {
				t.Errorf("b = %+v", b)
			}
		}},
		{"timeouts partial and zero", `{"mcpServers": {"a": {"command": "x", "timeouts": {"call": "5m", "connect": "0s", "restart": "2s"}}}}`, func(t *testing.T, c *Config) {
			want := defaultTimeouts()
			want.Call = Duration(5 * time.Minute)
			want.Restart = Duration(2 * time.Second)
			if got := c.Servers[0].Timeouts; got != want {
				t.Errorf("timeouts = %+v, want %+v", got, want)
			}
		}},
		{"trunk values", `{"trunk": {"startupWait": "2s", "concurrency": 1, "maxNameLength": 256, "prefix": "", "readOnly": true, "resourceTools": true, "toolSearch": true, "maxResultBytes": 67108864}}`, func(t *testing.T, c *Config) {
			want := TrunkOptions{StartupWait: Duration(2 * time.Second), Concurrency: 1, MaxNameLength: 256, Prefix: "", ReadOnly: true, ResourceTools: true, ToolSearch: true, MaxMessageBytes: 64 << 20, Pin: PinWarn}
			if !reflect.DeepEqual(c.Trunk, want) {
				t.Errorf("trunk = %+v", c.Trunk)
			}
		}},
		{"trunk zero means default", `{"trunk": {"startupWait": "0s", "concurrency": 0, "maxNameLength": 0, "unknown": 1}}`, func(t *testing.T, c *Config) {
			if !reflect.DeepEqual(c.Trunk, defaultTrunk()) {
				t.Errorf("trunk = %+v", c.Trunk)
			}
		}},
		{"trunk bounds inclusive", `{"trunk": {"maxNameLength": 32}}`, func(t *testing.T, c *Config) {
			if c.Trunk.MaxNameLength != 32 {
				t.Errorf("trunk = %+v", c.Trunk)
			}
		}},
		{"null fields are absent", `{"mcpServers": {"a": {"command": "x", "args": null, "env": null, "type": null, "tools": null, "timeouts": null}}}`, func(t *testing.T, c *Config) {
			want := Spec{Name: "a", Type: TransportStdio, Command: "x", Timeouts: defaultTimeouts()}
			if !c.Servers[0].Equal(want) {
				t.Errorf("got %+v", c.Servers[0])
			}
		}},
		{"filters on prompts and resources", `{"mcpServers": {"a": {"command": "x", "prompts": {"deny": ["*"]}, "resources": {"allow": ["file:*"], "extra": true}}}}`, func(t *testing.T, c *Config) {
			s := c.Servers[0]
			if s.Prompts.Allows("p") || !s.Resources.Allows("file:x") || s.Resources.Allows("http:x") {
				t.Errorf("got %+v %+v", s.Prompts, s.Resources)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseString(t, tt.json, env)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestConfigKeysAreNotExpanded(t *testing.T) {
	// Env and header keys are names: only values are expanded.
	c, err := parseString(t, `{"mcpServers": {"a": {"url": "https://e.com", "headers": {"X-$PORT": "${PORT}"}, "env": {"${PORT}": "${PORT}"}}}}`,
		mapLookup(map[string]string{"PORT": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers[0]
	if s.Env["${PORT}"] != "1" || s.Headers["X-$PORT"] != "1" || len(s.Env) != 1 || len(s.Headers) != 1 {
		t.Fatalf("env %v headers %v", s.Env, s.Headers)
	}
}

func TestConfigParseReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Parse(iotest.ErrReader(boom), noEnv)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want wrapping boom", err)
	}
}

func TestConfigParseExampleErrorMessage(t *testing.T) {
	// The exact message from the design: names server, field and variable.
	_, err := parseFile(t, "example.json", mapLookup(map[string]string{"HOME": "/h"}))
	want := `server "remote": headers.Authorization: variable "TOKEN" is not set`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
