package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// Protocol fidelity (see protocol_server_requests_test.go): log messages
// and logging/setLevel.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolLogging: notifications/message from an upstream reaches the
// host with the logger naming the server ("<server>" or
// "<server>/<logger>") and nothing else changed; logging/setLevel reaches
// every upstream that declared logging, and only those, as the host sent
// it, also when the host sends it right after initialize.
func TestProtocolLogging(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	evSrv, evTap := tapped(t, everythingArgv(t)...)
	evSrv["timeouts"] = slowTimeouts
	nSrv, nTap := tapped(t, notesBin)
	wSrv, wTap := tapped(t, weatherBin)
	// Pinned: the taps check logging/setLevel, which 2026-07-28 replaced
	// with a per-request log level.
	cfSrv, nSrv, wSrv = pin2025(cfSrv), pin2025(nSrv), pin2025(wSrv)
	cfg := writeConfig(t, map[string]server{"conformance": cfSrv, "everything": evSrv, "notes": nSrv, "weather": wSrv}, map[string]any{"startupWait": "60s"})
	// The host is pinned to 2025-11-25 too: the test is of logging/setLevel
	// right after initialize, and server-everything logs only once it has
	// the roots, which it asks for outside any call; a 2026-07-28 host is
	// never asked anything outside a call (the trunk refuses the request).
	h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{full: true, roots: protoRoots}, rev2025)

	// Right after initialize, as hosts do.
	if err := h.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	for name, tp := range map[string]*tap{"conformance": cfTap, "everything": evTap, "notes": nTap} {
		m := tp.waitReceived(t, ctx, name+"'s logging/setLevel", isMethod("logging/setLevel"))
		if got := compact(t, m.Params); got != `{"level":"info"}` {
			t.Errorf("%s got logging/setLevel %s", name, got)
		}
	}
	for _, m := range wTap.received() {
		if m.Method == "logging/setLevel" {
			t.Errorf("weather declares no logging but got %s", m.Raw)
		}
	}

	// The conformance server logs three info messages without a logger.
	callText(t, ctx, h.ClientSession, "mcp__conformance__test_tool_with_logging", nil)
	want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	fromServer := func(server string) []*mcp.LoggingMessageParams {
		var out []*mcp.LoggingMessageParams
		for _, l := range h.rec.logsSnapshot() {
			if l.Logger == server || strings.HasPrefix(l.Logger, server+"/") {
				out = append(out, l)
			}
		}
		return out
	}
	waitFor(ctx, 5*time.Second, func() bool { return len(fromServer("conformance")) >= 3 })
	got := fromServer("conformance")
	if len(got) != 3 {
		t.Fatalf("conformance logs: %s", mustJSON(got))
	}
	for i, l := range got {
		if l.Logger != "conformance" || l.Level != "info" || l.Data != want[i] {
			t.Errorf("conformance log %d: %s, want logger conformance, level info, data %q", i, mustJSON(l), want[i])
		}
	}

	// server-everything logs with logger "everything-server" once it has
	// the roots.
	if !waitFor(ctx, 20*time.Second, func() bool {
		for _, l := range fromServer("everything") {
			if l.Logger == "everything/everything-server" {
				return true
			}
		}
		return false
	}) {
		t.Errorf("no log from everything's everything-server logger: %s", mustJSON(h.rec.logsSnapshot()))
	}

	// Byte for byte, every message is the upstream's with only the logger
	// set.
	var upstream []map[string]json.RawMessage
	for _, tp := range []*tap{cfTap, evTap} {
		for _, m := range tp.sent() {
			if m.Method == "notifications/message" {
				var p map[string]json.RawMessage
				if err := json.Unmarshal(m.Params, &p); err != nil {
					t.Fatal(err)
				}
				upstream = append(upstream, p)
			}
		}
	}
	forwarded := 0
	for _, m := range hostTap.sent() {
		if m.Method != "notifications/message" {
			continue
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		var logger string
		_ = json.Unmarshal(p["logger"], &logger)
		server, inner, _ := strings.Cut(logger, "/")
		matched := false
		for _, u := range upstream {
			var uLogger string
			_ = json.Unmarshal(u["logger"], &uLogger)
			if uLogger != inner || compactOrEmpty(t, u["data"]) != compactOrEmpty(t, p["data"]) {
				continue
			}
			for k := range u {
				if k != "logger" && compact(t, u[k]) != compact(t, p[k]) {
					t.Errorf("member %s of a log message changed: %s -> %s", k, u[k], p[k])
				}
			}
			if len(p) != len(u)+map[bool]int{true: 0, false: 1}[inner != ""] {
				t.Errorf("a log message gained or lost members: %s", m.Raw)
			}
			matched = true
			break
		}
		if !matched || (server != "conformance" && server != "everything") {
			t.Errorf("the host got a log message no upstream sent: %s", m.Raw)
		}
		forwarded++
	}
	if forwarded < 4 {
		t.Errorf("only %d log messages were forwarded", forwarded)
	}

	// A higher level reaches the upstream, which then stays quiet at info.
	if err := h.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	cfTap.waitReceived(t, ctx, `logging/setLevel "error"`, func(m tapMsg) bool {
		return m.Method == "logging/setLevel" && compact(t, m.Params) == `{"level":"error"}`
	})
	callText(t, ctx, h.ClientSession, "mcp__conformance__test_tool_with_logging", nil)
	// What the server logged during the call came before its result, and
	// the trunk keeps that order: once recorded, nothing more is coming.
	h.rec.settle(ctx)
	if n := len(fromServer("conformance")); n != 3 {
		t.Errorf("at level error the conformance server still logged: %s", mustJSON(fromServer("conformance")))
	}
}
