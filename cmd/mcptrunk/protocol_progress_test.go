package main

// Protocol fidelity (see protocol_server_requests_test.go): progress
// notifications and cancellation.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressCall calls a tool with a progress token.
func progressCall(ctx context.Context, s *mcp.ClientSession, name string, args map[string]any, token any) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken(token)
	return s.CallTool(ctx, p)
}

// checkProgress requires exactly steps notifications for token, numbered 1
// to steps in order, each with total steps.
func checkProgress(t *testing.T, ctx context.Context, rec *hostRec, token any, steps int, message func(i int) string) {
	t.Helper()
	// The call has returned, and its progress came before its result: once
	// everything read is recorded, anything extra is there too.
	rec.settle(ctx)
	got := rec.progressFor(token)
	if len(got) != steps {
		t.Errorf("token %v: %d progress notifications, want %d: %s", token, len(got), steps, mustJSON(got))
		return
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != float64(steps) {
			t.Errorf("token %v: notification %d is progress %v of %v, want %d of %d", token, i, p.Progress, p.Total, i+1, steps)
		}
		if message != nil && p.Message != message(i+1) {
			t.Errorf("token %v: notification %d has message %q, want %q", token, i, p.Message, message(i+1))
		}
	}
}

// TestProtocolProgress: the host's progress token reaches the upstream
// unchanged (string or number), every notifications/progress comes back
// with it, and concurrent calls to different upstreams each get their own.
func TestProtocolProgress(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	wSrv, wTap := tapped(t, weatherBin)
	wSrv = pin2025(wSrv) // its tap checks the _meta exactly as the host sent it
	evSrv, evTap := tapped(t, everythingArgv(t)...)
	evSrv["timeouts"] = slowTimeouts
	cfg := writeConfig(t, map[string]server{"weather": wSrv, "weather2": weatherServer(), "everything": evSrv}, map[string]any{"startupWait": "60s"})
	h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{}, "")
	weatherMsg := func(i int) string { return fmt.Sprintf("step %d of 5", i) }

	t.Run("weather", func(t *testing.T) {
		res, err := progressCall(ctx, h.ClientSession, "mcp__weather__progress", map[string]any{"steps": 5, "interval_ms": 20}, "tok-weather")
		if err != nil || toolText(res) != "done" {
			t.Fatalf("progress: %v %s", err, mustJSON(res))
		}
		checkProgress(t, ctx, h.rec, "tok-weather", 5, weatherMsg)
		call := wTap.waitReceived(t, ctx, "the tools/call", isMethod("tools/call"))
		if !strings.Contains(call.Raw, `"_meta":{"progressToken":"tok-weather"}`) {
			t.Errorf("weather received %s: want the host's progressToken", call.Raw)
		}
	})

	t.Run("everything with a numeric token", func(t *testing.T) {
		res, err := progressCall(ctx, h.ClientSession, "mcp__everything__trigger-long-running-operation", map[string]any{"duration": 0.5, "steps": 5}, 4242)
		if err != nil || !strings.Contains(toolText(res), "Long running operation completed") {
			t.Fatalf("trigger-long-running-operation: %v %s", err, mustJSON(res))
		}
		checkProgress(t, ctx, h.rec, 4242, 5, nil)
		call := evTap.waitReceived(t, ctx, "the tools/call", func(m tapMsg) bool {
			return m.Method == "tools/call" && strings.Contains(m.Raw, "trigger-long-running-operation")
		})
		if !strings.Contains(call.Raw, `"progressToken":4242`) {
			t.Errorf("everything received %s: want the numeric progressToken 4242", call.Raw)
		}
		// Byte for byte: what everything sent is what the host got.
		var upstream, host []string
		for _, m := range evTap.sent() {
			if m.Method == "notifications/progress" {
				upstream = append(upstream, compact(t, m.Params))
			}
		}
		for _, m := range hostTap.sent() {
			if m.Method == "notifications/progress" && strings.Contains(m.Raw, `"progressToken":4242`) {
				host = append(host, compact(t, m.Params))
			}
		}
		if len(upstream) != 5 || !slices.Equal(upstream, host) {
			t.Errorf("progress params changed on the way:\nupstream: %q\nhost:     %q", upstream, host)
		}
	})

	t.Run("concurrent calls to different upstreams", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		run := func(name string, args map[string]any, token any) {
			defer wg.Done()
			if _, err := progressCall(ctx, h.ClientSession, name, args, token); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}
		wg.Add(3)
		go run("mcp__weather__progress", map[string]any{"steps": 5, "interval_ms": 40}, "A")
		go run("mcp__weather2__progress", map[string]any{"steps": 5, "interval_ms": 40}, "B")
		go run("mcp__everything__trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, 7)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		checkProgress(t, ctx, h.rec, "A", 5, weatherMsg)
		checkProgress(t, ctx, h.rec, "B", 5, weatherMsg)
		checkProgress(t, ctx, h.rec, 7, 3, nil)
	})
}

// TestProtocolCancellation: a host that cancels a call (go-sdk cancels its
// ctx; the raw client sends notifications/cancelled itself) makes the trunk
// cancel the upstream request, which stops; the trunk answers nothing for
// the cancelled request and keeps working.
func TestProtocolCancellation(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	wSrv, wTap := tapped(t, weatherBin)
	cfg := writeConfig(t, map[string]server{"weather": wSrv}, nil)

	// upstreamStopped finds the tools/call the upstream got for token,
	// waits for its notifications/cancelled, then for the upstream's answer
	// to it (mcp-go answers a cancelled call once its handler has
	// returned): from then on the upstream starts no progress for it. The
	// subtests' trunks share the tap and number their requests alike, so
	// each wait looks only past the message before it.
	upstreamStopped := func(t *testing.T, token string) {
		t.Helper()
		withToken := func(m tapMsg) bool { return strings.Contains(m.Raw, `"progressToken":`+mustJSON(token)) }
		call := wTap.waitReceived(t, ctx, "the tools/call with token "+token, func(m tapMsg) bool {
			return m.Method == "tools/call" && withToken(m)
		})
		waitTap(t, ctx, "notifications/cancelled for request "+string(call.ID), tapFrom(wTap.received, withToken), func(m tapMsg) bool {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			return m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(call.ID)
		})
		waitTap(t, ctx, "the answer to request "+string(call.ID), tapFrom(wTap.sent, withToken), func(m tapMsg) bool {
			return m.Method == "" && string(m.ID) == string(call.ID)
		})
	}
	// stoppedWithRequest fails when the host got (got, counted before
	// the tap is read) more progress for the cancelled call than the
	// upstream sent: the trunk passes on what was in flight when the
	// cancellation arrived, and no more. The host's count when it
	// cancelled is no bound: on a starved machine (load 20) the
	// cancellation took over 400 ms, two progress intervals, to pass
	// through the trunk to the upstream, and mcp-go writes a progress
	// notification it queued before the handler returned after its
	// answer.
	stoppedWithRequest := func(t *testing.T, token string, atCancel, got int) {
		t.Helper()
		sent := 0
		for _, m := range wTap.sent() {
			if m.Method == "notifications/progress" && strings.Contains(m.Raw, `"progressToken":`+mustJSON(token)) {
				sent++
			}
		}
		if got > sent {
			t.Errorf("progress went on after the cancellation: the host got %d notifications for %s (%d when it cancelled), the upstream sent %d", got, token, atCancel, sent)
		}
	}

	t.Run("go-sdk host", func(t *testing.T) {
		h := trunkHost(t, ctx, cfg, hostConfig{}, "")
		callCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := progressCall(callCtx, h.ClientSession, "mcp__weather__progress", map[string]any{"steps": 50, "interval_ms": 200}, "sdk-cancel")
			done <- err
		}()
		if !waitFor(ctx, 20*time.Second, func() bool { return len(h.rec.progressFor("sdk-cancel")) > 0 }) {
			cancel()
			t.Fatal("no progress before cancelling")
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled call succeeded")
		}
		n := len(h.rec.progressFor("sdk-cancel"))
		upstreamStopped(t, "sdk-cancel")
		// The trunk and the upstream still work; what the upstream sent
		// before that call's result has reached the host by then.
		res, err := progressCall(ctx, h.ClientSession, "mcp__weather__progress", map[string]any{"steps": 3, "interval_ms": 10}, "after")
		if err != nil || toolText(res) != "done" {
			t.Fatalf("a call after the cancellation: %v %s", err, mustJSON(res))
		}
		checkProgress(t, ctx, h.rec, "after", 3, nil)
		stoppedWithRequest(t, "sdk-cancel", n, len(h.rec.progressFor("sdk-cancel")))
	})

	t.Run("raw host", func(t *testing.T) {
		c := startRawTrunk(t, ctx, cfg)
		const id = 900001
		ch := rawSend(t, c, id, "tools/call", `{"name":"mcp__weather__progress","arguments":{"steps":50,"interval_ms":200},"_meta":{"progressToken":"raw-cancel"}}`)
		progress := func() int {
			n := 0
			for _, p := range rawNotes(c, "notifications/progress") {
				if strings.Contains(string(p), `"progressToken":"raw-cancel"`) {
					n++
				}
			}
			return n
		}
		if !waitFor(ctx, 20*time.Second, func() bool { return progress() > 0 }) {
			t.Fatal("no progress before cancelling")
		}
		n := progress()
		c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "the test changed its mind"})
		upstreamStopped(t, "raw-cancel")
		c.result(ctx, "ping", nil)
		// The upstream answers the forecast after its answer to the
		// cancelled call: by the forecast's result, the trunk has had
		// that answer (to drop) and the progress before it.
		res := c.result(ctx, "tools/call", `{"name":"mcp__weather__forecast","arguments":{"city":"Oslo","days":1}}`)
		if !strings.Contains(string(res), "Forecast for Oslo") {
			t.Errorf("forecast after the cancellation: %s", res)
		}
		select {
		case r := <-ch:
			t.Errorf("the trunk answered the cancelled request: %s %v", r.Result, r.Err)
		default:
		}
		stoppedWithRequest(t, "raw-cancel", n, progress())
	})
}
