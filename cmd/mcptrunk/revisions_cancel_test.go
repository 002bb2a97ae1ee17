package main

// Cancellation and progress across revisions: a host on one revision
// cancels a call that the trunk passes to an upstream on the other; the
// upstream is told (notifications/cancelled with its own request id), and
// the host's progress token comes back with the progress either way.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRevisionsCancellation(t *testing.T) {
	t.Parallel()
	crossedHost(t, "weather", func(*testing.T) []string { return []string{weatherBin} }, func(t *testing.T, ctx context.Context, h *host, tp *tap, upstream string) {
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := progressCall(callCtx, h.ClientSession, "mcp__weather__progress", map[string]any{"steps": 50, "interval_ms": 200}, "cross-cancel")
			done <- err
		}()
		// The host's own token comes back with the progress.
		if !waitFor(ctx, 20*time.Second, func() bool { return len(h.rec.progressFor("cross-cancel")) > 0 }) {
			t.Fatal("no progress with the host's token before cancelling")
		}
		call := tp.waitReceived(t, ctx, "the tools/call", func(m tapMsg) bool {
			return m.Method == "tools/call" && strings.Contains(m.Raw, `"progressToken":"cross-cancel"`)
		})
		if stateless := strings.Contains(call.Raw, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`); stateless != (upstream == revStateless) {
			t.Errorf("the upstream's tools/call at the wrong revision: %s", call.Raw)
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled call succeeded")
		}
		tp.waitReceived(t, ctx, "notifications/cancelled for request "+string(call.ID), func(m tapMsg) bool {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			return m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(call.ID)
		})
		// The trunk and the upstream still work.
		res, err := progressCall(ctx, h.ClientSession, "mcp__weather__progress", map[string]any{"steps": 2, "interval_ms": 10}, "after")
		if err != nil || toolText(res) != "done" {
			t.Fatalf("a call after the cancellation: %v %s", err, mustJSON(res))
		}
	})
}
