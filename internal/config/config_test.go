package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

const configDir = "../../testdata/config"

func noEnv(string) (string, bool) { return "", false }

func parseString(t *testing.T, s string, lookup func(string) (string, bool)) (*Config, error) {
	t.Helper()
	return Parse(strings.NewReader(s), lookup)
}

func parseFile(t *testing.T, name string, lookup func(string) (string, bool)) (*Config, error) {
	t.Helper()
	f, err := os.Open(filepath.Join(configDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Parse(f, lookup)
}

func defaultTimeouts() Timeouts {
	return Timeouts{Connect: Duration(30 * time.Second), List: Duration(30 * time.Second), Call: Duration(120 * time.Second)}
}

func defaultTrunk() TrunkOptions {
	return TrunkOptions{StartupWait: Duration(15 * time.Second), Concurrency: DefaultConcurrency, MaxNameLength: 64, Prefix: "mcp__", MaxResultBytes: DefaultMaxResultBytes}
}

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
			if got.Trunk != tt.want.Trunk {
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
			if len(c.Servers) != 0 || c.Trunk != defaultTrunk() {
				t.Errorf("got %+v", c)
			}
		}},
		{"empty mcpServers", `{"mcpServers": {}}`, func(t *testing.T, c *Config) {
			if len(c.Servers) != 0 {
				t.Errorf("got %+v", c.Servers)
			}
		}},
		{"null mcpServers and trunk", `{"mcpServers": null, "trunk": null}`, func(t *testing.T, c *Config) {
			if len(c.Servers) != 0 || c.Trunk != defaultTrunk() {
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
		{"timeouts partial and zero", `{"mcpServers": {"a": {"command": "x", "timeouts": {"call": "5m", "connect": "0s"}}}}`, func(t *testing.T, c *Config) {
			want := defaultTimeouts()
			want.Call = Duration(5 * time.Minute)
			if got := c.Servers[0].Timeouts; got != want {
				t.Errorf("timeouts = %+v, want %+v", got, want)
			}
		}},
		{"trunk values", `{"trunk": {"startupWait": "2s", "concurrency": 1, "maxNameLength": 256, "prefix": "", "readOnly": true, "resourceTools": true, "toolSearch": true, "maxResultBytes": 67108864}}`, func(t *testing.T, c *Config) {
			want := TrunkOptions{StartupWait: Duration(2 * time.Second), Concurrency: 1, MaxNameLength: 256, Prefix: "", ReadOnly: true, ResourceTools: true, ToolSearch: true, MaxResultBytes: 64 << 20}
			if c.Trunk != want {
				t.Errorf("trunk = %+v", c.Trunk)
			}
		}},
		{"trunk zero means default", `{"trunk": {"startupWait": "0s", "concurrency": 0, "maxNameLength": 0, "unknown": 1}}`, func(t *testing.T, c *Config) {
			if c.Trunk != defaultTrunk() {
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

func TestConfigParseBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want []string // every substring must appear in the error
		n    int      // number of error lines, 0 = don't check
	}{
		{"bad_syntax.json", []string{"invalid JSON at line 3, column 32", "invalid character '}'"}, 1},
		{"bad_empty.json", []string{"config is empty"}, 1},
		{"bad_truncated.json", []string{"invalid JSON at line 1", "unexpected end of JSON input"}, 1},
		{"bad_trailing.json", []string{"invalid JSON at line 1, column 20", "after top-level value"}, 1},
		{"bad_not_object.json", []string{"config must be a JSON object, got array"}, 1},
		{"bad_servers_not_object.json", []string{"mcpServers: want object, got array"}, 1},
		{"bad_server_not_object.json", []string{`server "files": want object, got string`}, 1},
		{"bad_no_command_or_url.json", []string{`server "x": one of "command" or "url" is required`}, 1},
		{"bad_command_and_url.json", []string{`server "x": "command" and "url" are mutually exclusive`}, 1},
		{"bad_stdio_without_command.json", []string{`server "x": command: required for type "stdio"`}, 1},
		{"bad_http_with_command.json", []string{`server "x": url: required for type "http"`}, 1},
		{"bad_sse_without_url.json", []string{`server "x": url: required for type "sse"`}, 1},
		{"bad_unknown_type.json", []string{`server "x": type: unknown transport "grpc" (want stdio, http or sse)`}, 1},
		{"bad_type_wrong_type.json", []string{`server "x": type: want string, got number`}, 1},
		{"bad_url_scheme.json", []string{`server "x": url: must be an absolute http:// or https:// URL`}, 1},
		{"bad_url_parse.json", []string{`server "x": url: not a valid URL`}, 1},
		{"bad_url_no_scheme.json", []string{`server "x": url: must be an absolute http:// or https:// URL`}, 1},
		{"bad_url_no_host.json", []string{`server "x": url: missing host`}, 1},
		{"bad_args_string.json", []string{`server "x": args: want array of strings, got string`}, 1},
		{"bad_args_element.json", []string{`server "x": args[1]: want string, got number`}, 1},
		{"bad_command_array.json", []string{`server "x": command: want string, got array`}, 1},
		{"bad_env_value_number.json", []string{`server "x": env.PORT: want string, got number`}, 1},
		{"bad_env_array.json", []string{`server "x": env: want object of strings, got array`}, 1},
		{"bad_env_name.json", []string{`server "x": env: invalid variable name "A=B"`, `server "x": env: invalid variable name ""`}, 2},
		{"bad_header_name.json", []string{`server "x": headers: invalid header name "Bad Name"`}, 1},
		{"bad_disabled_string.json", []string{`server "x": disabled: want boolean, got string`}, 1},
		{"bad_duration_syntax.json", []string{`server "x": timeouts.call: time: invalid duration "forever"`}, 1},
		{"bad_duration_number.json", []string{`server "x": timeouts.call: want a duration string such as "30s", got number`}, 1},
		{"bad_duration_negative.json", []string{`server "x": timeouts.connect: duration must not be negative`}, 1},
		{"bad_timeouts_string.json", []string{`server "x": timeouts: want object, got string`}, 1},
		{"bad_glob.json", []string{`server "x": tools.deny[1]: bad glob pattern "[abc": syntax error in pattern`}, 1},
		{"bad_glob_empty.json", []string{`server "x": prompts.allow[0]: empty pattern`}, 1},
		{"bad_filter_array.json", []string{`server "x": resources: want object, got array`}, 1},
		{"bad_readonly_string.json", []string{`server "x": readOnlyTools: want array of strings, got string`}, 1},
		{"bad_empty_name.json", []string{`server "": server name must not be empty`}, 1},
		{"bad_trunk_policy.json", []string{`trunk.prefix: prefix "mcp::": only letters, digits, '_' and '-' are allowed`, `trunk.readOnly: want boolean, got string`, `trunk.maxResultBytes: must be at least 1024, got 10`}, 3},
		{"bad_reserved_name.json", []string{`server "trunk": `, `server "a__b": name may not contain "__"`, `server "my.srv": its name collides with server "my srv"`}, 3},
		{"bad_unset_variable.json", []string{`server "x": headers.Authorization: variable "MCPTRUNK_TEST_UNSET_TOKEN" is not set`}, 1},
		{"bad_unterminated_variable.json", []string{`server "x": args[0]: unterminated "${" at byte 0`}, 1},
		{"bad_duplicate_server.json", []string{`server "x": defined more than once in mcpServers`}, 1},
		{"bad_disabled_still_validated.json", []string{`server "x": timeouts.call: time: invalid duration "soon"`}, 1},
		{"bad_trunk_concurrency.json", []string{"trunk.concurrency: must be >= 1, got -1"}, 1},
		{"bad_trunk_concurrency_float.json", []string{"trunk.concurrency: want integer, got number"}, 1},
		{"bad_trunk_concurrency_string.json", []string{"trunk.concurrency: want integer, got string"}, 1},
		{"bad_trunk_max_name_low.json", []string{"trunk.maxNameLength: must be between 32 and 256, got 16"}, 1},
		{"bad_trunk_max_name_high.json", []string{"trunk.maxNameLength: must be between 32 and 256, got 1000"}, 1},
		{"bad_trunk_startup_number.json", []string{`trunk.startupWait: want a duration string such as "30s", got number`}, 1},
		{"bad_trunk_not_object.json", []string{"trunk: want object, got array"}, 1},
		{"bad_many.json", []string{
			`server "a": args: want array of strings, got string`,
			`server "b": type: unknown transport "grpc"`,
			`server "c": tools.allow[1]: bad glob pattern "[x"`,
			`server "c": timeouts.list: want a duration string`,
			"trunk.maxNameLength: must be between 32 and 256, got 8",
		}, 5},
	}
	// Every bad_*.json file must be in the table.
	files, err := filepath.Glob(filepath.Join(configDir, "bad_*.json"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tt := range tests {
		listed[tt.file] = true
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s has no test case", f)
		}
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := parseFile(t, tt.file, noEnv)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			if c != nil {
				t.Errorf("Parse returned a config with an error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", msg, w)
				}
			}
			if lines := strings.Count(msg, "\n") + 1; tt.n != 0 && lines != tt.n {
				t.Errorf("got %d error lines, want %d:\n%s", lines, tt.n, msg)
			}
		})
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

// TestConfigErrorsNeverContainSecrets feeds secret values through every
// place a value can come from (variables, inline env and header values, the
// url) together with errors in those same fields, and checks that no error
// message quotes them.
func TestConfigErrorsNeverContainSecrets(t *testing.T) {
	const secret = "SUPERSECRET"
	lookup := mapLookup(map[string]string{
		"TOKEN":      secret,
		"TOKEN_NL":   secret + "\n",
		"TOKEN_NUL":  secret + "\x00",
		"URL_SECRET": "ftp://user:" + secret + "@example.com/",
		"BAD_URL":    "http://[" + secret,
	})
	tests := []struct{ name, json, want string }{
		{"header value with newline from variable", `{"mcpServers": {"x": {"url": "https://e.com", "headers": {"Authorization": "Bearer ${TOKEN_NL}"}}}}`,
			`server "x": headers.Authorization: value contains a line break or NUL byte`},
		{"inline header value with newline", `{"mcpServers": {"x": {"url": "https://e.com", "headers": {"Authorization": "Bearer SUPERSECRET\r\nX: y"}}}}`,
			"headers.Authorization: value contains a line break"},
		{"env value with NUL", `{"mcpServers": {"x": {"command": "c", "env": {"KEY": "${TOKEN_NUL}"}}}}`,
			"env.KEY: value contains a NUL byte"},
		{"arg with NUL", `{"mcpServers": {"x": {"command": "c", "args": ["--key=${TOKEN_NUL}"]}}}`,
			"args[0]: contains a NUL byte"},
		{"url with bad scheme from variable", `{"mcpServers": {"x": {"url": "${URL_SECRET}"}}}`,
			"url: must be an absolute http:// or https:// URL"},
		{"unparsable url with secret", `{"mcpServers": {"x": {"url": "${BAD_URL}"}}}`, "url: not a valid URL"},
		{"inline unparsable url", `{"mcpServers": {"x": {"url": "https://e.com:SUPERSECRET/"}}}`, "url: not a valid URL"},
		{"url without scheme", `{"mcpServers": {"x": {"url": "SUPERSECRET:x"}}}`, "url: must be an absolute"},
		{"secret header next to unset variable", `{"mcpServers": {"x": {"url": "https://e.com/?k=${TOKEN}", "headers": {"A": "SUPERSECRET", "B": "${NOPE}"}}}}`,
			`headers.B: variable "NOPE" is not set`},
		{"secret env next to bad reference", `{"mcpServers": {"x": {"command": "c", "env": {"A": "SUPERSECRET", "B": "${SUPERSECRET-x}"}}}}`,
			"env.B: invalid variable reference at byte 0"},
		{"command and url with secrets", `{"mcpServers": {"x": {"command": "c --key SUPERSECRET", "url": "https://e.com/?k=SUPERSECRET"}}}`,
			"mutually exclusive"},
		{"secret value given the wrong type", `{"mcpServers": {"x": {"command": "c", "env": {"A": ["SUPERSECRET"]}, "headers": {"H": {"v": "SUPERSECRET"}}}}}`,
			"env.A: want string, got array"},
		{"both command and url expanded", `{"mcpServers": {"x": {"command": "${TOKEN}", "url": "${TOKEN}"}}}`, "mutually exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseString(t, tt.json, lookup)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error leaks the secret: %q", err)
			}
		})
	}
}

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

func TestFilterAllows(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		allow  []string
		deny   []string
	}{
		{"zero allows everything", Filter{}, []string{"a", "", "delete_all"}, nil},
		{"allow list", Filter{Allow: []string{"get_*", "list_*"}}, []string{"get_x", "list_", "get_"}, []string{"delete_x", "xget_a", ""}},
		{"deny list", Filter{Deny: []string{"delete_*"}}, []string{"get_x", "deletex"}, []string{"delete_x", "delete_"}},
		{"deny beats allow", Filter{Allow: []string{"*"}, Deny: []string{"rm"}}, []string{"ls"}, []string{"rm"}},
		{"exact names", Filter{Allow: []string{"search_code"}}, []string{"search_code"}, []string{"search_codes"}},
		{"char class and ?", Filter{Allow: []string{"v[12]_?"}}, []string{"v1_a", "v2_b"}, []string{"v3_a", "v1_ab"}},
		{"star does not cross slash", Filter{Allow: []string{"file:*"}}, []string{"file:a"}, []string{"file:a/b"}},
		{"bad pattern never matches", Filter{Allow: []string{"[x"}}, nil, []string{"[x", "x"}},
		{"empty slices are like nil", Filter{Allow: []string{}, Deny: []string{}}, []string{"a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range tt.allow {
				if !tt.filter.Allows(n) {
					t.Errorf("%+v denies %q", tt.filter, n)
				}
			}
			for _, n := range tt.deny {
				if tt.filter.Allows(n) {
					t.Errorf("%+v allows %q", tt.filter, n)
				}
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		out  string
	}{
		{`"30s"`, 30 * time.Second, `"30s"`},
		{`"1m30s"`, 90 * time.Second, `"1m30s"`},
		{`"90s"`, 90 * time.Second, `"1m30s"`},
		{`"0"`, 0, `"0s"`},
		{`"250ms"`, 250 * time.Millisecond, `"250ms"`},
		{`"2h"`, 2 * time.Hour, `"2h0m0s"`},
	} {
		var d Duration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if d.D() != tt.want {
			t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, d.D(), tt.want)
		}
		out, err := json.Marshal(d)
		if err != nil || string(out) != tt.out {
			t.Errorf("Marshal(%v) = %s, %v, want %s", d.D(), out, err, tt.out)
		}
		var back Duration
		if err := json.Unmarshal(out, &back); err != nil || back != d {
			t.Errorf("round trip %s -> %s -> %v, %v", tt.in, out, back, err)
		}
	}

	// Round trip of a whole struct.
	in := Timeouts{Connect: Duration(time.Second), List: Duration(2 * time.Minute), Call: Duration(90 * time.Second)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"connect":"1s","list":"2m0s","call":"1m30s"}` {
		t.Errorf("Marshal(Timeouts) = %s", b)
	}
	var out Timeouts
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip = %+v, %v", out, err)
	}

	// null leaves the value unchanged.
	d := Duration(time.Second)
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || d != Duration(time.Second) {
		t.Errorf("null: %v, %v", d, err)
	}

	// Errors: a number names the field; bad strings and negatives fail.
	for _, tt := range []struct{ in, want string }{
		{`{"call": 30}`, "call"},
		{`{"call": true}`, "call"},
		{`{"call": "30"}`, "missing unit"},
		{`{"call": "-1s"}`, "negative"},
		{`{"call": ""}`, "invalid duration"},
	} {
		var tm Timeouts
		err := json.Unmarshal([]byte(tt.in), &tm)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v, want error containing %q", tt.in, err, tt.want)
		}
	}
	var te *json.UnmarshalTypeError
	var tm Timeouts
	if err := json.Unmarshal([]byte(`{"call": 30}`), &tm); !errors.As(err, &te) || te.Field != "call" {
		t.Errorf("number error = %#v, want *json.UnmarshalTypeError with Field call", err)
	}
}

func TestSpecEqual(t *testing.T) {
	base := func() Spec {
		return Spec{
			Name: "a", Type: TransportStdio, Command: "x", Args: []string{"1"},
			Env: map[string]string{"K": "v"}, Cwd: "/", Headers: map[string]string{"H": "v"},
			Tools: Filter{Allow: []string{"a*"}}, ReadOnlyTools: []string{"r"}, Timeouts: defaultTimeouts(),
		}
	}
	tests := []struct {
		name   string
		a, b   Spec
		equals bool
	}{
		{"identical", base(), base(), true},
		{"zero", Spec{}, Spec{}, true},
		{"nil vs empty", Spec{Name: "a"}, Spec{Name: "a", Args: []string{}, Env: map[string]string{}, Headers: map[string]string{},
			ReadOnlyTools: []string{}, Tools: Filter{Allow: []string{}, Deny: []string{}}, Prompts: Filter{Deny: []string{}}, Resources: Filter{Allow: []string{}}}, true},
		{"name", base(), func() Spec { s := base(); s.Name = "b"; return s }(), false},
		{"type", base(), func() Spec { s := base(); s.Type = TransportHTTP; return s }(), false},
		{"command", base(), func() Spec { s := base(); s.Command = "y"; return s }(), false},
		{"args", base(), func() Spec { s := base(); s.Args = []string{"2"}; return s }(), false},
		{"args order", func() Spec { s := base(); s.Args = []string{"1", "2"}; return s }(), func() Spec { s := base(); s.Args = []string{"2", "1"}; return s }(), false},
		{"env value", base(), func() Spec { s := base(); s.Env = map[string]string{"K": "w"}; return s }(), false},
		{"env extra", base(), func() Spec { s := base(); s.Env = map[string]string{"K": "v", "L": ""}; return s }(), false},
		{"cwd", base(), func() Spec { s := base(); s.Cwd = "/tmp"; return s }(), false},
		{"url", base(), func() Spec { s := base(); s.URL = "http://x"; return s }(), false},
		{"headers", base(), func() Spec { s := base(); s.Headers = nil; return s }(), false},
		{"disabled", base(), func() Spec { s := base(); s.Disabled = true; return s }(), false},
		{"tools", base(), func() Spec { s := base(); s.Tools.Deny = []string{"x"}; return s }(), false},
		{"prompts", base(), func() Spec { s := base(); s.Prompts.Allow = []string{"x"}; return s }(), false},
		{"resources", base(), func() Spec { s := base(); s.Resources.Deny = []string{"x"}; return s }(), false},
		{"readOnlyTools", base(), func() Spec { s := base(); s.ReadOnlyTools = nil; return s }(), false},
		{"timeouts", base(), func() Spec { s := base(); s.Timeouts.Call++; return s }(), false},
		{"oauth client", base(), func() Spec { s := base(); s.OAuth.ClientID = "c"; return s }(), false},
		{"oauth scopes", base(), func() Spec { s := base(); s.OAuth.Scopes = []string{"a"}; return s }(), false},
		{"oauth port", base(), func() Spec { s := base(); s.OAuth.CallbackPort = 8765; return s }(), false},
		{"oauth nil vs empty scopes", base(), func() Spec { s := base(); s.OAuth.Scopes = []string{}; return s }(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Equal(tt.b); got != tt.equals {
				t.Errorf("a.Equal(b) = %v, want %v", got, tt.equals)
			}
			if got := tt.b.Equal(tt.a); got != tt.equals {
				t.Errorf("b.Equal(a) = %v, want %v", got, tt.equals)
			}
		})
	}
	// Equal must not modify its operands.
	s := Spec{Args: []string{}}
	s.Equal(Spec{})
	if s.Args == nil {
		t.Error("Equal modified its receiver")
	}
}

// TestSpecEqualCoversAllFields fails when a field is added to Spec without
// thinking about Equal (every field must change the result).
func TestSpecEqualCoversAllFields(t *testing.T) {
	if n := reflect.TypeFor[Spec]().NumField(); n != 15 {
		t.Fatalf("Spec has %d fields; update Spec.Equal's normalisation and this test", n)
	}
}

func TestConfigOAuth(t *testing.T) {
	env := mapLookup(map[string]string{"CLIENT_SECRET": "SUPERSECRET", "CLIENT": "my-client"})
	c, err := parseString(t, `{"mcpServers": {
		"a": {"url": "https://e.com/mcp", "oauth": {"clientId": "${CLIENT}", "clientSecret": "${CLIENT_SECRET}", "scopes": ["read", "write"], "callbackPort": 8765}},
		"b": {"type": "sse", "url": "https://e.com/sse", "oauth": {}},
		"c": {"url": "https://e.com/mcp", "oauth": null}}}`, env)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := OAuthOptions{ClientID: "my-client", ClientSecret: "SUPERSECRET", Scopes: []string{"read", "write"}, CallbackPort: 8765}
	if got := c.Servers[0].OAuth; !reflect.DeepEqual(got, want) {
		t.Errorf("a: oauth = %+v, want %+v", got, want)
	}
	if got := c.Servers[1].OAuth; !reflect.DeepEqual(got, OAuthOptions{}) {
		t.Errorf("b: oauth = %+v, want zero", got)
	}
	if !c.Servers[1].UsesOAuth() || !c.Servers[2].UsesOAuth() {
		t.Error("OAuth should apply to remote servers without an Authorization header")
	}

	bad := []struct{ name, json, want string }{
		{"stdio", `{"mcpServers": {"x": {"command": "c", "oauth": {}}}}`, `server "x": oauth: only for remote servers (type "http" or "sse")`},
		{"with Authorization header", `{"mcpServers": {"x": {"url": "https://e.com", "headers": {"authorization": "Bearer ${CLIENT_SECRET}"}, "oauth": {"clientId": "c"}}}}`,
			`server "x": oauth: an Authorization header is configured too`},
		{"not an object", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": true}}}`, `server "x": oauth: want object, got boolean`},
		{"secret without client", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientSecret": "${CLIENT_SECRET}"}}}}`,
			`server "x": oauth.clientSecret: needs oauth.clientId`},
		{"secret of the wrong type", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientId": "c", "clientSecret": ["SUPERSECRET"]}}}}`,
			`server "x": oauth.clientSecret: want string, got array`},
		{"secret with newline", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientId": "c", "clientSecret": "SUPERSECRET\n"}}}}`,
			`server "x": oauth.clientSecret: contains a line break`},
		{"unset variable", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"clientId": "c", "clientSecret": "${NOPE}"}}}}`,
			`server "x": oauth.clientSecret: variable "NOPE" is not set`},
		{"scope with a space", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"scopes": ["a b"]}}}}`,
			`server "x": oauth.scopes[0]: must be one scope`},
		{"scopes not strings", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"scopes": [1]}}}}`,
			`server "x": oauth.scopes[0]: want string, got number`},
		{"port out of range", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"callbackPort": 70000}}}}`,
			`server "x": oauth.callbackPort: must be a port number (1-65535, or 0 for any free port), got 70000`},
		{"port not a number", `{"mcpServers": {"x": {"url": "https://e.com", "oauth": {"callbackPort": "8080"}}}}`,
			`server "x": oauth.callbackPort: want integer, got string`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseString(t, tt.json, env)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "SUPERSECRET") {
				t.Errorf("error leaks the secret: %q", err)
			}
		})
	}
}
