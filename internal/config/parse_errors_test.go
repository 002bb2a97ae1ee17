package config

import (
	"path/filepath"
	"strings"
	"testing"
)

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
		{"bad_protection.json", []string{
			`server "local": breaker: only for remote servers`,
			`server "remote": maxQueued: needs maxInFlight`,
			`server "remote": breaker.failures: must be 1 or more`,
			`server "remote": breaker.cooldown: time: invalid duration "soon"`,
			`server "negative": maxInFlight: must be 0 (no cap) or more, got -1`,
		}, 5},
		{"bad_timeouts_string.json", []string{`server "x": timeouts: want object, got string`}, 1},
		{"bad_glob.json", []string{`server "x": tools.deny[1]: bad glob pattern "[abc": syntax error in pattern`}, 1},
		{"bad_glob_empty.json", []string{`server "x": prompts.allow[0]: empty pattern`}, 1},
		{"bad_filter_array.json", []string{`server "x": resources: want object, got array`}, 1},
		{"bad_readonly_string.json", []string{`server "x": readOnlyTools: want array of strings, got string`}, 1},
		{"bad_empty_name.json", []string{`server "": server name must not be empty`}, 1},
		{"bad_trunk_policy.json", []string{`trunk.prefix: prefix "mcp::": only letters, digits, '_' and '-' are allowed`, `trunk.readOnly: want boolean, got string`, `trunk.maxResultBytes: must be at least 65536, got 10`}, 3},
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
		{"bad_trunk_metrics_listen.json", []string{`trunk.metrics.listen: must be a loopback address (127.0.0.1, [::1] or localhost), got "0.0.0.0:9464"`}, 1},
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
	tests := []parseErrorCase{
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
	checkParseErrors(t, tests, lookup, secret)
}

// parseErrorCase is a config, json, that must fail to parse with an error
// containing want.
type parseErrorCase struct{ name, json, want string }

// checkParseErrors parses each case in a subtest of its name and checks that
// the error contains the case's want and does not quote secret.
func checkParseErrors(t *testing.T, cases []parseErrorCase, lookup func(string) (string, bool), secret string) {
	t.Helper()
	for _, tt := range cases {
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
