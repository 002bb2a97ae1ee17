package main

// Helpers for the policy tests (policy_*_test.go): the trunk's config and
// start, its tools as listed, and calls whose results they look into.

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitingForAll merges trunk options over a long startupWait, so that the first
// list already holds every server.
func waitingForAll(opts map[string]any) map[string]any {
	out := map[string]any{"startupWait": "60s"}
	for k, v := range opts {
		out[k] = v
	}
	return out
}

// startRawTrunkEnv is startRawTrunk with extra environment variables.
func startRawTrunkEnv(t *testing.T, ctx context.Context, cfg string, env ...string) *rawConn {
	t.Helper()
	cmd := trunkCmd(newTag(t), "serve", "--config", cfg)
	cmd.Env = append(cmd.Env, env...)
	c := startRaw(t, "mcptrunk", cmd)
	c.initialize(ctx)
	return c
}

// listedTool is a tool as listed: its name, and its definition as sent.
type listedTool struct {
	Name string `json:"name"`
	raw  json.RawMessage
}

// toolsByName lists a connection's tools by name (following cursors).
func toolsByName(t testing.TB, ctx context.Context, c *rawConn) map[string]listedTool {
	t.Helper()
	out := map[string]listedTool{}
	for _, raw := range c.list(ctx, "tools/list", "tools") {
		var tool listedTool
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatalf("%s: a tool is not an object: %s", c.name, raw)
		}
		tool.raw = raw
		if _, dup := out[tool.Name]; dup {
			t.Errorf("%s: tool %q listed twice", c.name, tool.Name)
		}
		out[tool.Name] = tool
	}
	return out
}

// settledTools lists tools until two lists in a row agree (server-everything
// registers some tools after its handshake) and at least min are listed.
func settledTools(t testing.TB, ctx context.Context, c *rawConn, min int) map[string]listedTool {
	t.Helper()
	var prev, cur map[string]listedTool
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if eventually(wctx, 300*time.Millisecond, func() error {
		prev, cur = cur, toolsByName(t, ctx, c)
		if len(cur) >= min && prev != nil && slices.Equal(sortedKeys(prev), sortedKeys(cur)) {
			return nil
		}
		return fmt.Errorf("not settled")
	}) != nil {
		t.Fatalf("%s: tools never settled; last list (%d, want >= %d): %q", c.name, len(cur), min, sortedKeys(cur))
	}
	return cur
}

// sortedKeysOf lists the key member (name, uri or uriTemplate) of every item.
func sortedKeysOf(t testing.TB, items []json.RawMessage, key string) []string {
	t.Helper()
	out := keysOf(t, items, key)
	slices.Sort(out)
	return out
}

// matchesAny reports whether any glob pattern matches s.
func matchesAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// applyFilter applies an allow/deny filter to upstream keys and returns the
// exported form of those that pass, sorted: the test's own reading of the
// docs/exports.md's rule ("deny wins; an empty allow list allows all").
func applyFilter(keys []string, allow, deny []string, export func(string) string) []string {
	var out []string
	for _, k := range keys {
		if matchesAny(deny, k) || (len(allow) > 0 && !matchesAny(allow, k)) {
			continue
		}
		out = append(out, export(k))
	}
	slices.Sort(out)
	return out
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// callToolResponse calls a tool and returns its response (result or JSON-RPC error).
func callToolResponse(t testing.TB, ctx context.Context, c *rawConn, name string, args any) rawResponse {
	t.Helper()
	if m, ok := args.(map[string]any); args == nil || (ok && m == nil) {
		args = map[string]any{}
	}
	return c.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
}

// callToolResult calls a tool and decodes its result, failing on a JSON-RPC
// error.
func callToolResult(t testing.TB, ctx context.Context, c *rawConn, name string, args any) (toolResult, json.RawMessage) {
	t.Helper()
	r := callToolResponse(t, ctx, c, name, args)
	if r.Err != nil {
		t.Fatalf("%s: tools/call %s %s: %v", c.name, name, mustJSON(args), r.Err)
	}
	var res toolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("%s: tools/call %s: result %s: %v", c.name, name, r.Result, err)
	}
	return res, r.Result
}

// wantToolRefused checks that calling name gives a JSON-RPC error naming it.
func wantToolRefused(t testing.TB, ctx context.Context, c *rawConn, name string, args any) {
	t.Helper()
	r := callToolResponse(t, ctx, c, name, args)
	switch {
	case r.Err == nil:
		t.Errorf("tools/call %s: result %s, want a JSON-RPC error (the tool is not exported)", name, r.Result)
	case !strings.Contains(r.Err.Message, name):
		t.Errorf("tools/call %s: error %q does not name the tool", name, r.Err.Message)
	}
}

// waitStderr waits until the trunk's stderr has a line containing every
// one of subs, and returns it.
func waitStderr(ctx context.Context, c *rawConn, within time.Duration, subs ...string) (string, error) {
	line, err := waitStderrLine(ctx, c.stderr, within, subs...)
	if err != nil {
		return "", fmt.Errorf("no stderr line contains all of %q; stderr:\n%s", subs, tail(c.stderr.String(), 4000))
	}
	return line, nil
}
