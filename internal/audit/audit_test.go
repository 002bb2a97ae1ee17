package audit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// One line per tool call, prompt get and resource read, each with its
// outcome; nothing for other methods.
func TestLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := newTestLog(t, config.Audit{File: path})
	call := func(item string) observe.Request {
		return observe.Request{Method: "tools/call", Server: "notes", Item: item, Revision: "2025-11-25", Client: "claude-code",
			Params: json.RawMessage(`{"name":"` + item + `","arguments":{"text":"hi","token":"s3cret"}}`)}
	}
	request(l, call("mcp__notes__echo"), observe.Outcome{Result: json.RawMessage(`{"content":[]}`), Duration: 1500 * time.Microsecond})
	request(l, call("mcp__notes__fail"), observe.Outcome{Result: json.RawMessage(`{"content":[],"isError":true}`)})
	request(l, call("mcp__notes__down"), observe.Outcome{Err: jsonrpc.Errorf(jsonrpc.CodeUnavailable, "tool %q: server %q is failed", "mcp__notes__down", "notes")})
	request(l, call("mcp__notes__nope"), observe.Outcome{Err: jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown tool %q", "mcp__notes__nope")})
	request(l, call("mcp__notes__picky"), observe.Outcome{Err: jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "the server's own: bad argument"), Forwarded: true})
	request(l, call("mcp__notes__ask"), observe.Outcome{Result: json.RawMessage(`{"resultType":"input_required","inputRequests":{}}`)})
	request(l, call("mcp__notes__plain"), observe.Outcome{Err: errors.New("boom")})
	request(l, observe.Request{Method: "prompts/get", Server: "notes", Item: "mcp__notes__greet", Params: json.RawMessage(`{"name":"mcp__notes__greet"}`)},
		observe.Outcome{Result: json.RawMessage(`{"messages":[],"isError":true}`)})
	request(l, observe.Request{Method: "resources/read", Server: "notes", Item: "mcptrunk://notes/note://1", Transport: config.TransportHTTP, Session: "http-7", Subject: "ann@example.com", Params: json.RawMessage(`{"uri":"mcptrunk://notes/note://1"}`)},
		observe.Outcome{Result: json.RawMessage(`{"contents":[]}`)})
	request(l, observe.Request{Method: "resources/read", Server: "notes", Item: "mcptrunk://notes/note://2", Transport: config.TransportHTTP, Params: json.RawMessage(`{"uri":"mcptrunk://notes/note://2"}`)},
		observe.Outcome{Result: json.RawMessage(`{"contents":[]}`)})
	for _, m := range []string{"tools/list", "initialize", "ping", "resources/subscribe", "completion/complete"} {
		request(l, observe.Request{Method: m}, observe.Outcome{Result: json.RawMessage(`{}`)})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	want := []struct{ item, outcome string }{
		{"mcp__notes__echo", OutcomeOK},
		{"mcp__notes__fail", OutcomeToolError},
		{"mcp__notes__down", OutcomeError},
		{"mcp__notes__nope", OutcomeRefused},
		{"mcp__notes__picky", OutcomeError}, // the server's own -32602
		{"mcp__notes__ask", OutcomeInputRequired},
		{"mcp__notes__plain", OutcomeError},
		{"mcp__notes__greet", OutcomeOK}, // isError means nothing outside tools/call
		{"mcptrunk://notes/note://1", OutcomeOK},
		{"mcptrunk://notes/note://2", OutcomeOK},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		if lines[i]["item"] != w.item || lines[i]["outcome"] != w.outcome {
			t.Errorf("line %d: item %v outcome %v, want %s %s", i, lines[i]["item"], lines[i]["outcome"], w.item, w.outcome)
		}
		if _, ok := lines[i]["arguments"]; ok {
			t.Errorf("line %d has arguments, which were not asked for: %v", i, lines[i])
		}
	}
	first := lines[0]
	wantFirst := map[string]any{
		"time": "2026-03-01T12:00:00.123456789Z", "session": "stdio", "client": "claude-code", "revision": "2025-11-25",
		"method": "tools/call", "server": "notes", "item": "mcp__notes__echo", "durationMs": 1.5, "outcome": "ok",
		"bytesIn": float64(len(call("mcp__notes__echo").Params)), "bytesOut": float64(len(`{"content":[]}`)),
	}
	if !reflect.DeepEqual(first, wantFirst) {
		t.Errorf("first line\n%v\nwant\n%v", first, wantFirst)
	}
	for i, code := range map[int]float64{2: jsonrpc.CodeUnavailable, 3: jsonrpc.CodeInvalidParams, 4: jsonrpc.CodeInvalidParams, 6: jsonrpc.CodeInternalError} {
		if lines[i]["code"] != code || lines[i]["error"] == "" || lines[i]["bytesOut"] != 0.0 {
			t.Errorf("line %d: code %v error %v bytesOut %v, want code %v, the message and 0", i, lines[i]["code"], lines[i]["error"], lines[i]["bytesOut"], code)
		}
	}
	if lines[2]["error"] != `tool "mcp__notes__down": server "notes" is failed` {
		t.Errorf("error %q", lines[2]["error"])
	}
	if _, ok := lines[0]["code"]; ok {
		t.Errorf("a success has a code: %v", lines[0])
	}
	if got := lines[len(lines)-2]["session"]; got != "http-7" {
		t.Errorf("the session of a request over HTTP: %v", got)
	}
	if got := lines[len(lines)-2]["subject"]; got != "ann@example.com" {
		t.Errorf("the subject of a request with an access token: %v", got)
	}
	if got, ok := lines[len(lines)-1]["session"]; !ok || got != "" {
		t.Errorf("the session of a stateless request over HTTP: %v (present %v), want none", got, ok)
	}
}

// A request trunk.limits refused is a line of its own outcome, with the
// subject and the limit's message, whether the refusal is a JSON-RPC error
// or a tool error; a server's own error of the same code is its error.
func TestLimitedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := newTestLog(t, config.Audit{File: path})
	r := limits.Refusal{Limit: "forecasts", Requests: 20, Window: "1m0s", RetryAfter: 3, RetryAt: time.Date(2026, 3, 1, 12, 0, 3, 0, time.UTC)}
	who := func(method, item string) observe.Request {
		return observe.Request{Method: method, Server: "weather", Item: item, Transport: config.TransportHTTP, Subject: "ann@example.com"}
	}
	request(l, who("tools/call", "mcp__weather__forecast"), observe.Outcome{Result: r.ToolResult()})
	request(l, who("prompts/get", "mcp__weather__daily"), observe.Outcome{Err: r.Error()})
	request(l, who("prompts/get", "mcp__weather__own"), observe.Outcome{Err: jsonrpc.Errorf(limits.Code, "the server's own"), Forwarded: true})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %v", len(lines), lines)
	}
	for i, want := range []string{OutcomeLimited, OutcomeLimited, OutcomeError} {
		if lines[i]["outcome"] != want || lines[i]["subject"] != "ann@example.com" {
			t.Errorf("line %d: outcome %v subject %v, want %s and the subject", i, lines[i]["outcome"], lines[i]["subject"], want)
		}
	}
	for i := range 2 {
		if lines[i]["error"] != r.Message() {
			t.Errorf("line %d: error %v, want the limit's message", i, lines[i]["error"])
		}
	}
}

// With arguments: true each line carries them, the values of secret keys
// redacted at any depth; numbers keep their digits.
func TestArguments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := newTestLog(t, config.Audit{File: path, Arguments: true})
	params := `{"name":"mcp__api__get","arguments":{"url":"https://x","apiKey":"AK123","limit":12345678901234567890,` +
		`"headers":{"Authorization":"Bearer T0K","Accept":"a/b"},"auth":{"client_secret":"CS","user":"u"},` +
		`"credentials":[{"password":"P1"},{"keyword":"kept"}],"monkey":"kept","max_tokens":5,"secret":{"nested":"S"}}}`
	request(l, observe.Request{Method: "tools/call", Item: "mcp__api__get", Params: json.RawMessage(params)}, observe.Outcome{Result: json.RawMessage(`{}`)})
	request(l, observe.Request{Method: "tools/call", Item: "mcp__api__none", Params: json.RawMessage(`{"name":"mcp__api__none"}`)}, observe.Outcome{Result: json.RawMessage(`{}`)})
	request(l, observe.Request{Method: "tools/call", Item: "mcp__api__bad", Params: json.RawMessage(`{"name":"mcp__api__bad","arguments":[1,{"token":"T"}]}`)}, observe.Outcome{Result: json.RawMessage(`{}`)})
	l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"AK123", "T0K", "CS", "P1", `"S"`, `"T"`} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the log holds the secret %s:\n%s", secret, data)
		}
	}
	lines := readLines(t, path)
	var got map[string]any
	raw, _ := json.Marshal(lines[0]["arguments"])
	json.Unmarshal(raw, &got)
	want := map[string]any{
		"url": "https://x", "apiKey": Redacted, "limit": 12345678901234567890.0,
		"headers":     map[string]any{"Authorization": Redacted, "Accept": "a/b"},
		"auth":        map[string]any{"client_secret": Redacted, "user": "u"},
		"credentials": []any{map[string]any{"password": Redacted}, map[string]any{"keyword": "kept"}},
		"monkey":      "kept", "max_tokens": 5.0, "secret": Redacted,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("arguments\n%v\nwant\n%v", got, want)
	}
	if !strings.Contains(string(data), `"limit":12345678901234567890`) {
		t.Errorf("a big number lost its digits:\n%s", data)
	}
	if _, ok := lines[1]["arguments"]; ok {
		t.Errorf("a call without arguments has them: %v", lines[1])
	}
	if !reflect.DeepEqual(lines[2]["arguments"], []any{1.0, map[string]any{"token": Redacted}}) {
		t.Errorf("arguments that are not an object: %v", lines[2]["arguments"])
	}
}

// Which keys look secret.
func TestSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"token": true, "Token": true, "TOKEN": true, "accessToken": true, "access_token": true, "refresh-token": true,
		"password": true, "db.password": true, "PASSWORD": true, "passwd": true, "passphrase": true, "new_passwords": true,
		"secret": true, "client_secret": true, "clientSecret": true, "secrets": true,
		"key": true, "api_key": true, "apiKey": true, "APIKey": true, "x-api-key": true, "X-API-Key": true, "apikey": true, "privateKey": true, "aws_secret_access_key": true,
		"authorization": true, "Authorization": true, "proxy-authorization": true, "authToken": true,
		"keyword": false, "keywords": false, "monkey": false, "keys": false, "tokenizer": false, "max_tokens": false,
		"passage": false, "secretary": false, "author": false, "auth": false, "query": false, "": false, "turkey_count": false,
		"key2": true, "v2Key": true, "oauth2token": true, "sha256": false,
	} {
		if got := SecretKey(key); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v (words %q)", key, got, want, words(key))
		}
	}
}

// The file is created 0600: lines may carry arguments.
func TestFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	path := filepath.Join(t.TempDir(), "sub", "audit.jsonl")
	l, _ := newTestLog(t, config.Audit{File: path})
	l.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

// The log records what acts through a server, a task's settling included,
// and not the lists, pings or a task's polls.
func TestAuditedMethods(t *testing.T) {
	for method, want := range map[string]bool{
		"tools/call": true, "prompts/get": true, "resources/read": true,
		"tasks/result": true, "tasks/update": true, "tasks/cancel": true,
		"tasks/get": false, "tasks/list": false, "tools/list": false, "ping": false, "initialize": false,
	} {
		if got := audited(method); got != want {
			t.Errorf("audited(%q) = %v, want %v", method, got, want)
		}
	}
}

// What a host names is its own: a refused call of a 200 KB name from a
// 200 KB client is one line of a few KB, the item, the client and the
// error each cut at 1024 bytes and marked.
func TestHostValuesClipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := newTestLog(t, config.Audit{File: path})
	huge := strings.Repeat("n", 200<<10)
	request(l, observe.Request{Method: "tools/call", Item: huge, Client: huge, Params: json.RawMessage(`{}`)},
		observe.Outcome{Err: jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown tool %q", huge)})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(raw) > 4<<10 || len(lines) != 1 {
		t.Fatalf("%d bytes in %d lines, want one line of a few KB", len(raw), len(lines))
	}
	for _, k := range []string{"item", "client", "error"} {
		if v, _ := lines[0][k].(string); len(v) > maxItemLen+len("…") || !strings.HasSuffix(v, "…") {
			t.Errorf("%s: %d bytes, want at most %d and marked", k, len(v), maxItemLen)
		}
	}
}
