package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSlowHostDropsNotifications: a host that stops reading while an
// upstream floods it with notifications. The trunk does not buffer them
// forever: once its queue to the host is full and stays full, it drops them
// and counts them, and says so in the log. When the host reads again, the
// call that caused the flood is answered, another server answers at once,
// and mcp__trunk__status reports the count.
func TestSlowHostDropsNotifications(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	cfg := writeConfig(t, map[string]server{
		"notes": notesServer(),
		"chaos": chaosServer("-mode", "ok", "-max-life", "50s"),
	}, nil)
	stdin, r, stderr := startPipedTrunk(t, cfg, "warn")
	send := func(id int, method string, params any) {
		t.Helper()
		msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
		if id > 0 {
			msg["id"] = id
		}
		line, _ := json.Marshal(msg)
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			t.Fatalf("writing %s: %v", method, err)
		}
	}
	// await reads until the response with id, counting notifications.
	notes := 0
	await := func(id int) json.RawMessage {
		t.Helper()
		want := fmt.Sprintf(`"id":%d,`, id)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading the answer to %d: %v\n%s", id, err, tail(stderr.String(), 2000))
			}
			if strings.Contains(string(line), `"method":"notifications/`) {
				notes++
				continue
			}
			if strings.Contains(string(line), want) {
				return line
			}
		}
	}
	send(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "slow", "version": "0"}})
	await(1)
	send(0, "notifications/initialized", map[string]any{})
	send(2, "tools/list", map[string]any{})
	await(2)

	// The flood, with the host not reading.
	const flood = 50000
	send(3, "tools/call", map[string]any{"name": "mcp__chaos__notify_flood", "arguments": map[string]any{"count": flood}})
	if _, err := waitStderrLine(ctx, stderr, 40*time.Second, "dropping notifications: the host is not reading them fast enough"); err != nil {
		t.Fatalf("the trunk did not start dropping: %v\n%s", err, tail(stderr.String(), 2000))
	}

	// Reading again.
	if res := string(await(3)); !strings.Contains(res, fmt.Sprintf("sent %d notifications", flood)) {
		t.Fatalf("the flood call answered %s", res)
	}
	send(4, "tools/call", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "alive"}})
	if res := string(await(4)); !strings.Contains(res, "alive") {
		t.Fatalf("the other server answered %s", res)
	}
	send(5, "tools/call", map[string]any{"name": "mcp__trunk__status", "arguments": map[string]any{}})
	var status struct {
		Result struct {
			StructuredContent struct {
				Dropped int64 `json:"droppedNotifications"`
			} `json:"structuredContent"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	line := await(5)
	if err := json.Unmarshal(line, &status); err != nil {
		t.Fatalf("status: %v: %s", err, line)
	}
	dropped := status.Result.StructuredContent.Dropped
	if dropped == 0 && len(status.Result.Content) > 0 {
		var report struct {
			Dropped int64 `json:"droppedNotifications"`
		}
		_ = json.Unmarshal([]byte(status.Result.Content[0].Text), &report)
		dropped = report.Dropped
	}
	if dropped <= 0 || dropped >= flood {
		t.Errorf("status reports %d dropped notifications of %d (the host read %d)", dropped, flood, notes)
	}
	if int64(notes)+dropped > flood {
		t.Errorf("the host read %d notifications and %d were dropped: more than the %d sent", notes, dropped, flood)
	}
}
