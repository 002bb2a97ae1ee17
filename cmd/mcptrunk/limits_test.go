package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// TestLimitsPerCaller: through serve --http with two signed-in callers,
// alice runs into trunk.limits and bob is unaffected. Her 4th call of a
// tool limited to 3 is a tool error naming the limit and when to retry,
// with Retry-After on the stateless exchange; her request past the
// server-wide limit is a JSON-RPC error with the retry time in its data,
// answered 429 with Retry-After; her own 2025-era session is refused
// too (the count is the subject's, whatever the transport); bob's calls
// go through.
func TestLimitsPerCaller(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	iss := testissuer.New(t)
	cfg := writeConfig(t, map[string]server{
		"conf": pin2025(server{"command": conformanceBin(t), "timeouts": map[string]string{"call": "30s"}}),
	}, map[string]any{
		"startupWait": "60s",
		"http":        map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": pathsResource, "scopes": []string{"mcp"}}},
		"limits": map[string]any{
			"texts": map[string]any{"server": "conf", "tool": "test_simple_text", "requests": 3, "window": "1h"},
			"conf":  map[string]any{"server": "conf", "requests": 5, "window": "1h"},
		},
	})
	trunk := startHTTPTrunk(t, ctx, cfg)
	token := func(sub string) string { return iss.Token(t, sub, pathsResource, map[string]any{"scope": "mcp"}) }
	alice, bob := token("alice"), token("bob")
	const tool, prompt = "mcp__conf__test_simple_text", "mcp__conf__test_simple_prompt"
	callTool := func(who string) httpReply {
		return statelessReply(t, ctx, trunk.url, who, "tools/call", tool, map[string]any{"name": tool, "arguments": map[string]any{}}, nil)
	}
	getPrompt := func(who string) httpReply {
		return statelessReply(t, ctx, trunk.url, who, "prompts/get", prompt, map[string]any{"name": prompt, "arguments": map[string]any{}}, nil)
	}
	isToolError := func(r httpReply) (bool, string) {
		t.Helper()
		res := answerIn(t, r, 1)
		if res.Err != nil {
			t.Fatalf("tools/call: %v", res.Err)
		}
		var tr struct {
			Content []struct{ Text string }
			IsError bool
		}
		if err := json.Unmarshal(res.Result, &tr); err != nil || len(tr.Content) == 0 {
			t.Fatalf("tools/call result %s: %v", res.Result, err)
		}
		return tr.IsError, tr.Content[0].Text
	}

	for i := range 3 {
		if r := callTool(alice); r.status != http.StatusOK {
			t.Fatalf("alice's call %d: HTTP %d", i+1, r.status)
		} else if isErr, text := isToolError(r); isErr {
			t.Fatalf("alice's call %d: a tool error %q", i+1, text)
		}
	}
	r := callTool(alice)
	isErr, text := isToolError(r)
	if r.status != http.StatusOK || !isErr || !strings.Contains(text, `limit "texts" refused this request (3 requests per 1h0m0s): try again in `) {
		t.Errorf("alice's 4th call: HTTP %d, isError %v, %q; want 200 and a tool error naming the limit and the retry", r.status, isErr, text)
	}
	if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 || secs > 1200 {
		t.Errorf("alice's 4th call: Retry-After %q, want the seconds until one call is let through (at most 20 minutes)", r.header.Get("Retry-After"))
	}

	// The server-wide limit: 3 calls so far, 2 more requests to conf go
	// through, the 3rd is refused, as a JSON-RPC error.
	for i := range 2 {
		if r := getPrompt(alice); r.status != http.StatusOK || answerIn(t, r, 1).Err != nil {
			t.Fatalf("alice's prompts/get %d: HTTP %d %q", i+1, r.status, r.messages)
		}
	}
	r = getPrompt(alice)
	res := answerIn(t, r, 1)
	if r.status != http.StatusTooManyRequests || res.Err == nil || res.Err.Code != limits.Code || !strings.Contains(res.Err.Message, `limit "conf"`) {
		t.Fatalf("alice's 3rd prompts/get: HTTP %d, %+v; want 429 and error %d naming limit conf", r.status, res.Err, limits.Code)
	}
	var data limits.Refusal
	if err := json.Unmarshal(res.Err.Data, &data); err != nil || data.Limit != "conf" || data.RetryAfter < 1 || data.RetryAt.IsZero() {
		t.Errorf("the error's data %s (%v): want the limit, retryAfter and retryAt", res.Err.Data, err)
	}
	if got := r.header.Get("Retry-After"); got != strconv.Itoa(data.RetryAfter) {
		t.Errorf("Retry-After %q, want the data's retryAfter %d", got, data.RetryAfter)
	}

	// Her own 2025-era session counts against the same subject.
	s := openAuthSession(t, ctx, trunk.url, alice)
	if status, res := s.call(t, ctx, alice, "prompts/get", map[string]any{"name": prompt, "arguments": map[string]any{}}); status != http.StatusOK || res.Err == nil || res.Err.Code != limits.Code {
		t.Errorf("alice's session prompts/get: HTTP %d, %+v; want the limit's error", status, res.Err)
	}

	// bob is unaffected.
	for i := range 3 {
		if r := callTool(bob); r.status != http.StatusOK || r.header.Get("Retry-After") != "" {
			t.Fatalf("bob's call %d: HTTP %d, Retry-After %q", i+1, r.status, r.header.Get("Retry-After"))
		} else if isErr, text := isToolError(r); isErr {
			t.Errorf("bob's call %d: a tool error %q", i+1, text)
		}
	}
	if r := getPrompt(bob); r.status != http.StatusOK || answerIn(t, r, 1).Err != nil {
		t.Errorf("bob's prompts/get: HTTP %d %q", r.status, r.messages)
	}
}

// TestCheckShowsLimitsAndProtection: mcptrunk check lists the rules of
// trunk.limits, saying where they are counted (in memory, or in the
// shared Redis of trunk.state), and each server's cap and breaker.
func TestCheckShowsLimitsAndProtection(t *testing.T) {
	notes := notesServer()
	notes["maxInFlight"] = 2
	store := testkit.StartRedis(t, testkit.RedisOptions{})
	rules := map[string]any{"notes-calls": map[string]any{"server": "notes", "tool": "add_*", "requests": 20, "window": "1m"}}
	for _, c := range []struct {
		trunk map[string]any
		where string
	}{
		{map[string]any{"limits": rules}, "counted in this process's memory"},
		{map[string]any{"limits": rules, "state": map[string]any{"url": store.URL()}}, "counted in Redis at " + store.URL() + " for every replica that shares it"},
	} {
		cfg := writeConfig(t, map[string]server{"notes": notes}, c.trunk)
		out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
		if code != 0 {
			t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{
			"protection:\n  notes  maxInFlight 2: 0 in flight, 0 waiting\n",
			"limits (trunk.limits, " + c.where + "):\n  notes-calls: 20 per 1m0s, calls of tools add_* of servers notes, counted per subject\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("check's output lacks %q:\n%s", want, out)
			}
		}
	}
}
