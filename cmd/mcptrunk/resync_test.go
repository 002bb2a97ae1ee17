//go:build !windows

package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRestartedServerIsToldAgain: a server that crashes and is restarted
// gets the host's log level and resource subscriptions again, as it had
// them before; without that it would fall silent on both.
func TestRestartedServerIsToldAgain(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	state := t.TempDir() + "/state"
	cfg := writeConfig(t, map[string]server{
		// Pinned: the server counts logging/setLevel and
		// resources/subscribe, which 2026-07-28 does not send.
		"flaky": pin2025(chaosWithState(state, nil, "-mode", "crash-on-call", "-crash-first", "1")),
	}, nil)
	h := trunkHost(t, ctx, cfg, faultHost, "")
	if _, _, err := h.waitStatus(ctx, 10*time.Second, func(st map[string]serverStatus) bool { return st["flaky"].State == "ready" }); err != nil {
		t.Fatal(err)
	}
	if err := h.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	if err := h.Subscribe(ctx, &mcp.SubscribeParams{URI: "mcptrunk://flaky/chaos://state"}); err != nil {
		t.Fatalf("resources/subscribe: %v", err)
	}
	// Count the server's stderr lines as the trunk logs them, not the copies
	// in failure messages (which quote the stderr tail).
	told := func(method string) int { return strings.Count(h.stderr.String(), `line="chaos: request `+method+`"`) }
	// The server's stderr reaches the log a moment after it answered: wait
	// for the lines rather than reading the log once.
	if err := eventually(ctx, 20*time.Millisecond, func() error {
		if told("logging/setLevel") != 1 || told("resources/subscribe") != 1 {
			return fmt.Errorf("before the crash the server was told setLevel %d times, subscribe %d times; want 1 each",
				told("logging/setLevel"), told("resources/subscribe"))
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, tail(h.stderr.String(), 3000))
	}

	if _, err := h.callTool(ctx, "mcp__flaky__ping_tool", nil); err == nil {
		t.Fatal("the crashing call succeeded")
	}
	if _, _, err := h.waitStatus(ctx, 15*time.Second, func(st map[string]serverStatus) bool {
		return st["flaky"].State == "ready" && st["flaky"].Restarts >= 1
	}); err != nil {
		t.Fatalf("the server did not come back: %v", err)
	}
	if err := eventually(ctx, 20*time.Millisecond, func() error {
		if told("logging/setLevel") < 2 || told("resources/subscribe") < 2 {
			return fmt.Errorf("after the restart the server was told setLevel %d times, subscribe %d times; want 2 each",
				told("logging/setLevel"), told("resources/subscribe"))
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, tail(h.stderr.String(), 3000))
	}
}
