package proxy

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// trunk.limits holds on the stdio host too (every caller without an
// identity shares one count), through the trunk's own call_tool as
// through a direct call, and counts no request a rule does not match:
// the limited tool's third call is a tool error naming the rule, the
// server never sees it, and another tool still answers.
func TestLimitsInMemory(t *testing.T) {
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("forecast", "the weather"), memserver.Tool("alerts", "warnings")}}
	var seen atomic.Int64
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/call" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		seen.Add(1)
		return json.RawMessage(`{"content":[{"type":"text","text":"sunny"}]}`), nil
	}
	_, h := memTrunk(t, memserver.Set{"weather": srv}, nil, map[string]any{
		"toolSearch": true,
		"limits":     map[string]any{"forecasts": map[string]any{"server": "weather", "tool": "forecast", "requests": 2, "window": "1h"}},
	}, nil)
	h.initialize(`{}`)

	if text, errObj := callText(h, "mcp__weather__forecast", `{}`); text != "sunny" {
		t.Fatalf("the 1st call: %q %s", text, errObj)
	}
	if text, errObj := callText(h, "mcp__trunk__call_tool", `{"name":"mcp__weather__forecast","arguments":{}}`); text != "sunny" {
		t.Fatalf("the 2nd call, through call_tool: %q %s", text, errObj)
	}
	for _, c := range []struct{ name, args string }{
		{"mcp__weather__forecast", `{}`},
		{"mcp__trunk__call_tool", `{"name":"mcp__weather__forecast","arguments":{}}`},
	} {
		res, errObj := h.call("tools/call", `{"name":"`+c.name+`","arguments":`+c.args+`}`)
		r, ok := limits.InResult(res)
		if errObj != nil || !ok || r.Limit != "forecasts" || r.RetryAfter < 1 || !strings.Contains(string(res), `"isError":true`) {
			t.Errorf("%s past the limit: %s %s; want a tool error carrying the refusal", c.name, res, errObj)
		}
	}
	if seen := seen.Load(); seen != 2 {
		t.Errorf("the server saw %d calls, want the 2 let through", seen)
	}
	if text, errObj := callText(h, "mcp__weather__alerts", `{}`); text != "sunny" {
		t.Errorf("another tool: %q %s, want it answered", text, errObj)
	}
}

// A limit never tells a caller that an item hidden from it is there: its
// calls of the hidden item are refused as a missing one's are, however
// many, and count toward no limit; the caller who sees the item is
// limited as usual.
func TestLimitsKeepHiddenItemsHidden(t *testing.T) {
	trunkOpts := map[string]any{"limits": map[string]any{"notes-calls": map[string]any{"server": "notes", "requests": 1, "window": "1h"}}}
	for k, v := range teamTrunk {
		trunkOpts[k] = v
	}
	tr, _ := memTrunk(t, teamServers(), nil, trunkOpts, nil)
	tr.Share()
	attach := func(subject, group string) *memHost {
		h := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: subject, Subject: subject, Claims: map[string]any{"sub": subject, "groups": []any{group}}})}
		h.initialize(`{}`)
		return h
	}
	support, admin := attach("sam", "support"), attach("ada", "admin")
	for i := range 3 {
		res, errObj := support.call("tools/call", `{"name":"mcp__notes__add_note","arguments":{}}`)
		if _, limited := limits.InResult(res); limited || errObj == nil || strings.Contains(string(errObj), "limit") {
			t.Fatalf("support's call %d of the hidden add_note: %s %s; want the refusal of a missing tool", i+1, res, errObj)
		}
	}
	if text, errObj := callText(admin, "mcp__notes__add_note", `{}`); text != "done" {
		t.Fatalf("admin's 1st call: %q %s", text, errObj)
	}
	res, _ := admin.call("tools/call", `{"name":"mcp__notes__add_note","arguments":{}}`)
	if _, limited := limits.InResult(res); !limited {
		t.Errorf("admin's 2nd call: %s, want the limit's tool error", res)
	}
	// A rule without a tool counts the server's other requests too.
	if _, errObj := admin.call("resources/subscribe", `{"uri":"mcptrunk://notes/notes://all"}`); !strings.Contains(string(errObj), strconv.Itoa(limits.Code)) {
		t.Errorf("admin's subscribe past the limit: %s, want the limit's error", errObj)
	}
}

// With the counts in a shared store that does not answer, a request a rule
// matches is refused naming the store and the rule: a tools/call with a
// tool error the model reads, a prompts/get with an error of
// CodeUnavailable; the server sees neither. With AllowUnavailable both
// go through, uncounted.
func TestLimitsStoreUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there: every connection is refused
	for _, allow := range []bool{false, true} {
		t.Run("allow="+strconv.FormatBool(allow), func(t *testing.T) {
			srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("forecast", "the weather")},
				Prompts: []json.RawMessage{json.RawMessage(`{"name":"plan","description":"a trip"}`)}}
			var seen atomic.Int64
			srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				seen.Add(1)
				if method == "prompts/get" {
					return json.RawMessage(`{"messages":[]}`), nil
				}
				return json.RawMessage(`{"content":[{"type":"text","text":"sunny"}]}`), nil
			}
			client := redisconn.New(redisconn.Options{Addr: addr})
			t.Cleanup(func() { client.Close() })
			_, h := memTrunk(t, memserver.Set{"weather": srv}, nil, map[string]any{
				"limits": map[string]any{
					"forecasts": map[string]any{"server": "weather", "tool": "forecast", "requests": 20, "window": "1m"},
					"prompts":   map[string]any{"server": "weather", "requests": 20, "window": "1m"}, // tools/call too
				},
			}, &Options{Limits: &limits.Options{Shared: client, Store: "redis://" + addr + "/0", AllowUnavailable: allow}})
			h.initialize(`{}`)

			res, errObj := h.call("tools/call", `{"name":"mcp__weather__forecast","arguments":{}}`)
			got := string(res) + string(errObj)
			if allow != strings.Contains(got, "sunny") {
				t.Errorf("a forecast with the store down: %s", got)
			}
			if !allow && (errObj != nil || !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `limit \"forecasts\" could not be checked`) || !strings.Contains(got, addr)) {
				t.Errorf("a forecast with the store down: %s; want a tool error naming the limit and the store", got)
			}
			res, errObj = h.call("prompts/get", `{"name":"mcp__weather__plan"}`)
			var e jsonrpc.Error
			switch {
			case allow && (errObj != nil || res == nil):
				t.Errorf("a prompt with the store down, allowed: %s %s", res, errObj)
			case !allow && (json.Unmarshal(errObj, &e) != nil || e.Code != jsonrpc.CodeUnavailable || !strings.Contains(e.Message, addr) || !strings.Contains(e.Message, `"prompts"`)):
				t.Errorf("a prompt with the store down: %s %s; want error %d naming the limit and the store", res, errObj, jsonrpc.CodeUnavailable)
			}
			want := int64(0)
			if allow {
				want = 2
			}
			if n := seen.Load(); n != want {
				t.Errorf("the server saw %d requests, want %d", n, want)
			}
		})
	}
}
