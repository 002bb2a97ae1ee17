package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// Notifications across revisions, both ways: resource subscriptions
// (resources/subscribe on one side, subscriptions/listen on the other),
// list_changed, and log messages with the host's level, between a host on
// one revision and go-sdk's conformance server held to the other.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRevisionsNotifications(t *testing.T) {
	t.Parallel()
	crossedHost(t, "cf", func(t *testing.T) []string { return []string{conformanceBin(t)} }, func(t *testing.T, ctx context.Context, h *host, tp *tap, upstream string) {
		// The upstream was spoken to at its revision: its first request
		// says which.
		first := tp.waitReceived(t, ctx, "the trunk's first request", func(m tapMsg) bool { return m.Method != "" })
		if want := map[string]string{rev2025: "initialize", revStateless: "server/discover"}[upstream]; first.Method != want {
			t.Fatalf("the trunk's first request to the upstream was %s, want %s", first.Method, want)
		}

		// A subscription: the host's own way, the upstream's own way.
		const watched = "mcptrunk://cf/test://watched-resource"
		if err := h.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		wantUp := map[string]string{rev2025: `"method":"resources/subscribe"`, revStateless: `"resourceSubscriptions":["test://watched-resource"]`}[upstream]
		tp.waitReceived(t, ctx, "the upstream's subscription", func(m tapMsg) bool { return strings.Contains(m.Raw, wantUp) })
		if !waitFor(ctx, 20*time.Second, func() bool {
			for _, u := range h.rec.updatedSnapshot() {
				if u == watched {
					return true
				}
			}
			return false
		}) {
			t.Errorf("no notifications/resources/updated for %s (got %v)", watched, h.rec.updatedSnapshot())
		}

		// list_changed: the host read the list, the upstream changes it.
		tools, err := h.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := len(tools.Tools)
		if _, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__cf__test_trigger_tool_change", Arguments: map[string]any{}}); err != nil {
			t.Fatalf("test_trigger_tool_change: %v", err)
		}
		if !waitFor(ctx, 20*time.Second, func() bool {
			h.rec.mu.Lock()
			defer h.rec.mu.Unlock()
			return h.rec.listChanged["tools"] > 0
		}) {
			t.Errorf("the host was not told its tool list changed")
		}
		tools, err = h.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) == before {
			t.Errorf("after list_changed: %d tools, before %d (%v)", len(tools.Tools), before, err)
		}

		// Log messages at the host's level: logging/setLevel from a
		// 2025-era host, the request's _meta logLevel from a 2026 one.
		params := &mcp.CallToolParams{Name: "mcp__cf__test_tool_with_logging", Arguments: map[string]any{}}
		if h.InitializeResult().ProtocolVersion == rev2025 {
			if err := h.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatalf("setLevel: %v", err)
			}
		} else {
			params.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": "debug"}
		}
		if _, err := h.CallTool(ctx, params); err != nil {
			t.Fatalf("test_tool_with_logging: %v", err)
		}
		if !waitFor(ctx, 20*time.Second, func() bool { return len(h.rec.logsSnapshot()) > 0 }) {
			t.Fatalf("no log messages reached the host")
		}
		for _, l := range h.rec.logsSnapshot() {
			if !strings.HasPrefix(l.Logger, "cf") {
				t.Errorf("a log message with logger %q, want the server's name", l.Logger)
			}
		}
	})
}

// TestStatelessLogLevelPerRequest: a host at 2026-07-28 names its log level
// in each request, and a server at that revision logs only for requests
// that ask: the trunk passes each request's own level on, and none for a
// request that named none, whatever an earlier request asked for.
func TestStatelessLogLevelPerRequest(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	srv, tp := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"cf": srv}, map[string]any{"startupWait": "60s"})
	h := trunkHost(t, ctx, cfg, hostConfig{}, revStateless)
	call := func(level string) {
		t.Helper()
		p := &mcp.CallToolParams{Name: "mcp__cf__test_tool_with_logging", Arguments: map[string]any{}}
		if level != "" {
			p.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": level}
		}
		if _, err := h.CallTool(ctx, p); err != nil {
			t.Fatalf("test_tool_with_logging: %v", err)
		}
	}
	call("debug")
	call("")
	var levels []string
	for _, m := range tp.received() {
		if m.Method == "tools/call" && strings.Contains(m.Raw, `"name":"test_tool_with_logging"`) {
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			levels = append(levels, string(p.Meta["io.modelcontextprotocol/logLevel"]))
		}
	}
	if len(levels) != 2 || levels[0] != `"debug"` || levels[1] != "" {
		t.Errorf("the upstream's log levels, call by call: %q, want [\"debug\" none]", levels)
	}
}
