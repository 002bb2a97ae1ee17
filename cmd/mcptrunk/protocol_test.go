package main

// Protocol fidelity (issue #3): every MCP method and notification that
// crosses the trunk, in both directions, through mcptrunk's real stdio, with
// go-sdk v1.8.0 as the host and the raw client where bytes matter. Taps on
// the upstreams (see protocol_helpers_test.go) show what each upstream
// actually received.

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var protoRoots = []*mcp.Root{{URI: "file:///tmp/mcptrunk-proto-root", Name: "proto-root"}}

// initCaps returns the capabilities member of an initialize request.
func initCaps(t *testing.T, m tapMsg) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("initialize params %s: %v", m.Params, err)
	}
	return p.Capabilities
}

// TestProtocolServerRequests: sampling/createMessage, elicitation/create and
// roots/list sent by upstreams reach the host, and the host's answers reach
// the upstream that asked, under its own request id. The upstreams are told
// exactly the host's sampling, elicitation and roots capabilities.
func TestProtocolServerRequests(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	evSrv, evTap := tapped(t, everythingArgv(t)...)
	evSrv["timeouts"] = slowTimeouts
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "60s"})
	h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{full: true, roots: protoRoots}, "")

	// Capabilities: what the host declared, nothing more, byte for byte.
	hostCaps := initCaps(t, hostTap.waitReceived(t, ctx, "the host's initialize", isMethod("initialize")))
	for _, k := range []string{"sampling", "elicitation", "roots"} {
		if hostCaps[k] == nil {
			t.Fatalf("the go-sdk host did not declare %s: %q", k, sortedKeys(hostCaps))
		}
	}
	for name, tp := range map[string]*tap{"everything": evTap, "conformance": cfTap} {
		caps := initCaps(t, tp.waitReceived(t, ctx, name+"'s initialize", isMethod("initialize")))
		if got := sortedKeys(caps); !slices.Equal(got, []string{"elicitation", "roots", "sampling"}) {
			t.Errorf("%s was told capabilities %q, want elicitation, roots, sampling", name, got)
		}
		for k, v := range caps {
			if compact(t, v) != compact(t, hostCaps[k]) {
				t.Errorf("%s was told %s = %s; the host declared %s", name, k, v, hostCaps[k])
			}
		}
	}

	// server-everything lists these tools only for a client that declared
	// the capabilities.
	waitTools(t, ctx, h.ClientSession,
		"mcp__everything__trigger-sampling-request",
		"mcp__everything__trigger-elicitation-request",
		"mcp__everything__get-roots-list")

	t.Run("sampling", func(t *testing.T) {
		text := callText(t, ctx, h.ClientSession, "mcp__everything__trigger-sampling-request", map[string]any{"prompt": "hello trunk", "maxTokens": 20})
		for _, want := range []string{`"model": "mcptrunk-test-model"`, "sampled: Resource trigger-sampling-request context: hello trunk"} {
			if !strings.Contains(text, want) {
				t.Errorf("trigger-sampling-request: %q lacks %q", text, want)
			}
		}
		h.rec.mu.Lock()
		n := len(h.rec.sampling)
		var last *mcp.CreateMessageParams
		if n > 0 {
			last = h.rec.sampling[n-1]
		}
		h.rec.mu.Unlock()
		if last == nil || last.MaxTokens != 20 || last.SystemPrompt != "You are a helpful test server." {
			t.Errorf("the host got sampling params %s", mustJSON(last))
		}
		// The upstream's request id got the host's answer.
		resp := evTap.waitAnswered(t, ctx, "everything's sampling/createMessage", isMethod("sampling/createMessage"))
		if !strings.Contains(string(resp.Result), `"model":"mcptrunk-test-model"`) {
			t.Errorf("everything got %s for its sampling request", resp.Raw)
		}
		text = callText(t, ctx, h.ClientSession, "mcp__conformance__test_sampling", map[string]any{"prompt": "conformance prompt"})
		if text != "LLM response: sampled: conformance prompt" {
			t.Errorf("test_sampling: %q", text)
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		text := callText(t, ctx, h.ClientSession, "mcp__everything__trigger-elicitation-request", nil)
		if !strings.Contains(text, "- Name: Ada") {
			t.Errorf("trigger-elicitation-request: %q", text)
		}
		resp := evTap.waitAnswered(t, ctx, "everything's elicitation/create", isMethod("elicitation/create"))
		if !strings.Contains(string(resp.Result), `"action":"accept"`) {
			t.Errorf("everything got %s for its elicitation", resp.Raw)
		}
		text = callText(t, ctx, h.ClientSession, "mcp__conformance__test_elicitation", map[string]any{"message": "who are you?"})
		if text != "Elicitation result: action=accept, content=map[username:Ada]" {
			t.Errorf("test_elicitation: %q", text)
		}
	})

	t.Run("roots", func(t *testing.T) {
		text := callText(t, ctx, h.ClientSession, "mcp__everything__get-roots-list", nil)
		if !strings.Contains(text, "URI: file:///tmp/mcptrunk-proto-root") || !strings.Contains(text, "proto-root") {
			t.Errorf("get-roots-list: %q", text)
		}
		text = callText(t, ctx, h.ClientSession, "mcp__conformance__test_input_required_result_list_roots", nil)
		if text != "Client exposed 1 root(s): file:///tmp/mcptrunk-proto-root" {
			t.Errorf("test_input_required_result_list_roots: %q", text)
		}
		if n := h.rec.count("roots/list"); n < 2 {
			t.Errorf("the host answered roots/list %d times, want at least 2", n)
		}
	})

	t.Run("an error from the host", func(t *testing.T) {
		res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__conformance__test_sampling", Arguments: map[string]any{"prompt": hostRejects + " please"}})
		if err != nil {
			t.Fatalf("test_sampling: %v", err)
		}
		if !res.IsError || !strings.Contains(toolText(res), hostRejection.Message) {
			t.Errorf("test_sampling with a host that refuses: %s", mustJSON(res))
		}
		// The upstream got the host's error object as the host sent it.
		resp := cfTap.waitAnswered(t, ctx, "the refused sampling/createMessage", func(m tapMsg) bool {
			return m.Method == "sampling/createMessage" && strings.Contains(m.Raw, hostRejects)
		})
		hostResp := hostTap.waitReceived(t, ctx, "the host's refusal", func(m tapMsg) bool {
			return m.Method == "" && m.Error != nil && m.Error.Code == -1
		})
		if resp.Error == nil || mustJSON(resp.Error) != mustJSON(hostResp.Error) {
			t.Errorf("the host answered %s; the upstream got %s", hostResp.Raw, resp.Raw)
		}
	})

	t.Run("all three in one call", func(t *testing.T) {
		text := callText(t, ctx, h.ClientSession, "mcp__conformance__test_input_required_result_multiple_inputs", nil)
		if text != "sampled: Generate a greeting Ada — 1 root(s) visible" {
			t.Errorf("test_input_required_result_multiple_inputs: %q", text)
		}
	})
}

// TestProtocolCapabilitiesHonest: a host that declares no client
// capabilities gets upstreams that were told none, so they offer what they
// offer such a client directly (server-everything hides its sampling,
// elicitation and roots tools), and never send the requests.
func TestProtocolCapabilitiesHonest(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	evSrv, evTap := tapped(t, argv...)
	evSrv["timeouts"] = slowTimeouts
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "60s"})
	h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{}, "")
	direct := directHost(t, ctx, argv, hostConfig{}, "")
	directConf := directHost(t, ctx, []string{conformanceBin(t)}, hostConfig{}, "2025-11-25")

	hostCaps := initCaps(t, hostTap.waitReceived(t, ctx, "the host's initialize", isMethod("initialize")))
	hostTap.waitReceived(t, ctx, "the host's notifications/initialized", isMethod("notifications/initialized"))
	if len(hostCaps) != 0 {
		t.Fatalf("the go-sdk host declared %q; the test needs a host with no capabilities", sortedKeys(hostCaps))
	}
	for name, tp := range map[string]*tap{"everything": evTap, "conformance": cfTap} {
		init := tp.waitReceived(t, ctx, name+"'s initialize", isMethod("initialize"))
		if caps := initCaps(t, init); len(caps) != 0 {
			t.Errorf("%s was told capabilities %q by a trunk whose host declared none: %s", name, sortedKeys(caps), init.Raw)
		}
		// The handshake is completed for the upstream, in order.
		tp.waitReceived(t, ctx, name+"'s notifications/initialized", isMethod("notifications/initialized"))
		msgs := tp.received()
		if i := slices.IndexFunc(msgs, isMethod("notifications/initialized")); i < 1 || msgs[0].Method != "initialize" {
			t.Errorf("%s's handshake: %v", name, msgs[:min(3, len(msgs))])
		}
	}

	// The same tools as directly with the same client options, once both
	// have settled (server-everything registers tools after initialized).
	var directNames, throughNames []string
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := eventually(wctx, 200*time.Millisecond, func() error {
		directNames = toolNames(t, ctx, direct.ClientSession)
		throughNames = nil
		for _, n := range toolNames(t, ctx, h.ClientSession) {
			if raw, ok := strings.CutPrefix(n, "mcp__everything__"); ok {
				throughNames = append(throughNames, raw)
			}
		}
		if !slices.Equal(sortedCopy(directNames), throughNames) || !slices.Contains(directNames, "simulate-research-query") {
			return fmt.Errorf("directly %q, through the trunk %q", sortedCopy(directNames), throughNames)
		}
		return nil
	})
	if err != nil {
		t.Errorf("server-everything's tools differ: %v", err)
	}
	for _, hidden := range []string{"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
		if slices.Contains(throughNames, hidden) {
			t.Errorf("server-everything lists %s through the trunk although the host cannot serve it", hidden)
		}
	}

	// A tool that needs sampling fails as it does directly: code, message
	// and data as the server sent them.
	_, errThrough := h.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__conformance__test_missing_capability"})
	_, errDirect := directConf.CallTool(ctx, &mcp.CallToolParams{Name: "test_missing_capability"})
	sameRPCError(t, "test_missing_capability", errDirect, errThrough)

	// No server-to-client request was ever sent.
	time.Sleep(500 * time.Millisecond) // server-everything asks for roots 350ms after initialized when it may
	for name, tp := range map[string]*tap{"everything": evTap, "conformance": cfTap} {
		for _, m := range tp.sent() {
			switch m.Method {
			case "roots/list", "sampling/createMessage", "elicitation/create":
				t.Errorf("%s sent %s to a host without the capability: %s", name, m.Method, m.Raw)
			}
		}
	}
}

// sameRPCError requires both calls to have failed with the same JSON-RPC
// error (code, message, data).
func sameRPCError(t *testing.T, what string, direct, through error) {
	t.Helper()
	if direct == nil || through == nil {
		t.Errorf("%s: want a JSON-RPC error both ways; directly %v, through the trunk %v", what, direct, through)
		return
	}
	d, th := asWireError(direct), asWireError(through)
	if d == nil || th == nil {
		t.Errorf("%s: not JSON-RPC errors: directly %v, through the trunk %v", what, direct, through)
		return
	}
	if d.Code != th.Code || d.Message != th.Message || compactOrEmpty(t, d.Data) != compactOrEmpty(t, th.Data) {
		t.Errorf("%s: the error changed on the way:\ndirectly:          %d %q %s\nthrough the trunk: %d %q %s", what, d.Code, d.Message, d.Data, th.Code, th.Message, th.Data)
	}
}

func compactOrEmpty(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	return compact(t, raw)
}

// TestProtocolRootsListChanged: the host's notifications/roots/list_changed
// reaches the upstreams, which then ask for the roots again.
func TestProtocolRootsListChanged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	evSrv, evTap := tapped(t, everythingArgv(t)...)
	evSrv["timeouts"] = slowTimeouts
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "notes": notesServer()}, map[string]any{"startupWait": "60s"})
	h := trunkHost(t, ctx, cfg, hostConfig{full: true, roots: protoRoots}, "")

	// server-everything asks for the roots 350ms after initialized and logs
	// what it got.
	rootsLog := func(n int) func() bool {
		want := fmt.Sprintf("Roots updated: %d root(s) received from client", n)
		return func() bool {
			for _, l := range h.rec.logsSnapshot() {
				if l.Data == want && l.Logger == "everything/everything-server" {
					return true
				}
			}
			return false
		}
	}
	if !waitFor(ctx, 30*time.Second, rootsLog(1)) {
		t.Fatalf("server-everything never logged the first roots/list; logs: %s", mustJSON(h.rec.logsSnapshot()))
	}
	before := h.rec.count("roots/list")

	h.client.AddRoots(&mcp.Root{URI: "file:///tmp/mcptrunk-proto-root-2", Name: "second"})
	evTap.waitReceived(t, ctx, "notifications/roots/list_changed", isMethod("notifications/roots/list_changed"))
	if !waitFor(ctx, 20*time.Second, rootsLog(2)) {
		t.Fatalf("server-everything did not ask for the roots again after roots/list_changed; logs: %s", mustJSON(h.rec.logsSnapshot()))
	}
	if after := h.rec.count("roots/list"); after <= before {
		t.Errorf("the host answered roots/list %d times before roots/list_changed and %d after", before, after)
	}
	text := callText(t, ctx, h.ClientSession, "mcp__everything__get-roots-list", nil)
	if !strings.Contains(text, "file:///tmp/mcptrunk-proto-root-2") || !strings.Contains(text, "(2 total)") {
		t.Errorf("get-roots-list after the change: %q", text)
	}
}

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
	waitFor(ctx, 5*time.Second, func() bool { return len(rec.progressFor(token)) >= steps })
	time.Sleep(100 * time.Millisecond) // anything extra would show now
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

	// upstreamCancelled finds the tools/call the upstream got for token and
	// waits for its notifications/cancelled.
	upstreamCancelled := func(t *testing.T, token string) {
		t.Helper()
		call := wTap.waitReceived(t, ctx, "the tools/call with token "+token, func(m tapMsg) bool {
			return m.Method == "tools/call" && strings.Contains(m.Raw, `"progressToken":`+mustJSON(token))
		})
		wTap.waitReceived(t, ctx, "notifications/cancelled for request "+string(call.ID), func(m tapMsg) bool {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			return m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(call.ID)
		})
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
		upstreamCancelled(t, "sdk-cancel")
		n := len(h.rec.progressFor("sdk-cancel"))
		time.Sleep(1 * time.Second) // five more steps if the upstream had gone on
		if m := len(h.rec.progressFor("sdk-cancel")); m > n+1 {
			t.Errorf("progress went on after the cancellation: %d notifications, then %d", n, m)
		}
		// The trunk and the upstream still work.
		res, err := progressCall(ctx, h.ClientSession, "mcp__weather__progress", map[string]any{"steps": 3, "interval_ms": 10}, "after")
		if err != nil || toolText(res) != "done" {
			t.Fatalf("a call after the cancellation: %v %s", err, mustJSON(res))
		}
		checkProgress(t, ctx, h.rec, "after", 3, nil)
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
		c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "the test changed its mind"})
		upstreamCancelled(t, "raw-cancel")
		n := progress()
		select {
		case r := <-ch:
			t.Errorf("the trunk answered the cancelled request: %s %v", r.Result, r.Err)
		case <-time.After(1 * time.Second):
		}
		if m := progress(); m > n+1 {
			t.Errorf("progress went on after the cancellation: %d notifications, then %d", n, m)
		}
		c.result(ctx, "ping", nil)
		res := c.result(ctx, "tools/call", `{"name":"mcp__weather__forecast","arguments":{"city":"Oslo","days":1}}`)
		if !strings.Contains(string(res), "Forecast for Oslo") {
			t.Errorf("forecast after the cancellation: %s", res)
		}
	})
}

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
	cfg := writeConfig(t, map[string]server{"conformance": cfSrv, "everything": evSrv, "notes": nSrv, "weather": wSrv}, map[string]any{"startupWait": "60s"})
	h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{full: true, roots: protoRoots}, "")

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
	time.Sleep(300 * time.Millisecond)
	if n := len(fromServer("conformance")); n != 3 {
		t.Errorf("at level error the conformance server still logged: %s", mustJSON(fromServer("conformance")))
	}
}

// TestProtocolCompletions: completion/complete for a namespaced prompt and
// for a namespaced template URI reaches the owner with the raw name or URI
// and nothing else changed, and the result comes back byte for byte.
func TestProtocolCompletions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	evSrv, evTap := tapped(t, argv...)
	evSrv["timeouts"] = slowTimeouts
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "60s"})
	trunk := startRawTrunk(t, ctx, cfg)
	direct := map[string]*rawConn{
		"everything":  startRawDirect(t, ctx, "everything", argv...),
		"conformance": startRawDirect(t, ctx, "conformance", conformanceBin(t)),
	}
	taps := map[string]*tap{"everything": evTap, "conformance": cfTap}

	cases := []struct {
		name, server, direct, through, want string
	}{
		{"prompt argument", "everything",
			`{"ref":{"type":"ref/prompt","name":"completable-prompt"},"argument":{"name":"department","value":"S"}}`,
			`{"ref":{"type":"ref/prompt","name":"mcp__everything__completable-prompt"},"argument":{"name":"department","value":"S"}}`,
			`["Sales","Support"]`},
		{"prompt argument with context", "everything",
			`{"ref":{"type":"ref/prompt","name":"completable-prompt"},"argument":{"name":"name","value":""},"context":{"arguments":{"department":"Engineering"}}}`,
			`{"ref":{"type":"ref/prompt","name":"mcp__everything__completable-prompt"},"argument":{"name":"name","value":""},"context":{"arguments":{"department":"Engineering"}}}`,
			`["Alice","Bob","Charlie"]`},
		{"template variable", "everything",
			`{"ref":{"type":"ref/resource","uri":"demo://resource/dynamic/text/{resourceId}"},"argument":{"name":"resourceId","value":"12"}}`,
			`{"ref":{"type":"ref/resource","uri":"mcptrunk://everything/demo://resource/dynamic/text/{resourceId}"},"argument":{"name":"resourceId","value":"12"}}`,
			`["12"]`},
		{"conformance template", "conformance",
			`{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"4"}}`,
			`{"ref":{"type":"ref/resource","uri":"mcptrunk://conformance/test://template/{id}/data"},"argument":{"name":"id","value":"4"}}`,
			`[]`},
		{"conformance prompt", "conformance",
			`{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"x"}}`,
			`{"ref":{"type":"ref/prompt","name":"mcp__conformance__test_prompt_with_arguments"},"argument":{"name":"arg1","value":"x"}}`,
			`[]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := direct[tc.server].result(ctx, "completion/complete", tc.direct)
			got := trunk.result(ctx, "completion/complete", tc.through)
			if string(got) != string(want) {
				t.Errorf("the result changed on the way:\ndirectly:          %s\nthrough the trunk: %s", want, got)
			}
			var res struct {
				Completion struct {
					Values json.RawMessage `json:"values"`
				} `json:"completion"`
			}
			if err := json.Unmarshal(got, &res); err != nil || compact(t, res.Completion.Values) != tc.want {
				t.Errorf("values %s, want %s", res.Completion.Values, tc.want)
			}
			// The upstream got the host's params with the raw name or URI.
			taps[tc.server].waitReceived(t, ctx, "completion/complete "+tc.direct, func(m tapMsg) bool {
				return m.Method == "completion/complete" && compact(t, m.Params) == tc.direct
			})
		})
	}
}

// TestProtocolSubscriptions: resources/subscribe and unsubscribe reach the
// owner with the raw URI, and notifications/resources/updated comes back
// with the namespaced URI.
func TestProtocolSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	evSrv, evTap := tapped(t, everythingArgv(t)...)
	evSrv["timeouts"] = slowTimeouts
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "60s"})
	h := trunkHost(t, ctx, cfg, hostConfig{}, "")

	var doc string
	for r, err := range h.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		if strings.HasPrefix(r.URI, "mcptrunk://everything/demo://resource/static/document/") && doc == "" {
			doc = r.URI
		}
	}
	if doc == "" {
		t.Fatal("server-everything lists no static document")
	}
	rawDoc := strings.TrimPrefix(doc, "mcptrunk://everything/")
	const watched = "mcptrunk://conformance/test://watched-resource"
	updates := func(uri string) int {
		n := 0
		for _, u := range h.rec.updatedSnapshot() {
			if u == uri {
				n++
			}
		}
		return n
	}
	subscribed := func(tp *tap, method, uri string) {
		t.Helper()
		tp.waitReceived(t, ctx, method+" "+uri, func(m tapMsg) bool {
			return m.Method == method && compact(t, m.Params) == `{"uri":`+mustJSON(uri)+`}`
		})
	}

	// The conformance server updates test://watched-resource every 3s for
	// its subscribers.
	if err := h.Subscribe(ctx, &mcp.SubscribeParams{URI: watched}); err != nil {
		t.Fatalf("subscribe %s: %v", watched, err)
	}
	subscribed(cfTap, "resources/subscribe", "test://watched-resource")

	// server-everything sends updates for subscribed URIs once
	// toggle-subscriber-updates starts them (at once, then every 5s).
	if err := h.Subscribe(ctx, &mcp.SubscribeParams{URI: doc}); err != nil {
		t.Fatalf("subscribe %s: %v", doc, err)
	}
	subscribed(evTap, "resources/subscribe", rawDoc)
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil)
	if !waitFor(ctx, 10*time.Second, func() bool { return updates(doc) > 0 }) {
		t.Errorf("no notifications/resources/updated for %s; got %q", doc, h.rec.updatedSnapshot())
	}
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil) // off again

	if !waitFor(ctx, 10*time.Second, func() bool { return updates(watched) > 0 }) {
		t.Errorf("no notifications/resources/updated for %s; got %q", watched, h.rec.updatedSnapshot())
	}
	for _, u := range h.rec.updatedSnapshot() {
		if u != doc && u != watched {
			t.Errorf("an update for a URI the host never subscribed to, or not namespaced: %q", u)
		}
	}

	// Unsubscribing reaches both owners with the raw URI, and updates stop.
	if err := h.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: doc}); err != nil {
		t.Fatalf("unsubscribe %s: %v", doc, err)
	}
	subscribed(evTap, "resources/unsubscribe", rawDoc)
	if err := h.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: watched}); err != nil {
		t.Fatalf("unsubscribe %s: %v", watched, err)
	}
	subscribed(cfTap, "resources/unsubscribe", "test://watched-resource")
	n := updates(doc)
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil) // sends at once to subscribers
	callText(t, ctx, h.ClientSession, "mcp__everything__toggle-subscriber-updates", nil)
	time.Sleep(300 * time.Millisecond)
	if m := updates(doc); m != n {
		t.Errorf("updates for %s after unsubscribing: %d, then %d", doc, n, m)
	}
}

// rawToolNames lists the names in a raw tools/list (one page) and its
// nextCursor.
func rawPage(t *testing.T, raw json.RawMessage, field string) (names []string, cursor string, hasCursor bool) {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("a list page: %v", err)
	}
	var items []map[string]any
	if err := json.Unmarshal(p[field], &items); err != nil {
		t.Fatalf("a list page's %s: %v", field, err)
	}
	key := "name"
	if field == "resources" {
		key = "uri"
	}
	for _, it := range items {
		s, _ := it[key].(string)
		names = append(names, s)
	}
	if c, ok := p["nextCursor"]; ok {
		_ = json.Unmarshal(c, &cursor)
		hasCursor = true
	}
	return names, cursor, hasCursor
}

// TestProtocolListChanged: a burst of list_changed from an upstream
// (server-everything sends several right after initialized) reaches the
// host as at most a couple of list_changed, only once the host has listed,
// and the host ends with the full list; the same for tools and prompts
// changed by tool calls.
func TestProtocolListChanged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	// everything starts a second late, so the host has listed before its
	// burst; startupWait is short so that first list does not wait for it.
	evSrv, evTap := tapped(t, append([]string{"sh", "-c", `sleep 1; exec "$0" "$@"`}, argv...)...)
	evSrv["timeouts"] = slowTimeouts
	cfSrv, cfTap := tapped(t, conformanceBin(t))
	cfg := writeConfig(t, map[string]server{"everything": evSrv, "conformance": cfSrv}, map[string]any{"startupWait": "100ms"})
	const caps = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`
	c, _ := rawInit(t, ctx, cfg, "2025-11-25", caps)
	listChanged := func(list string) int { return len(rawNotes(c, "notifications/"+list+"/list_changed")) }

	first := keysOf(t, c.list(ctx, "tools/list", "tools"), "name")
	for _, n := range first {
		if strings.HasPrefix(n, "mcp__everything__") {
			t.Fatalf("setup: everything was listed before it started: %q", first)
		}
	}
	if n := listChanged("tools"); n != 0 {
		t.Errorf("%d tools/list_changed before anything changed", n)
	}
	// The host has read the resources too (but not the templates, which
	// share their list_changed).
	for _, r := range keysOf(t, c.list(ctx, "resources/list", "resources"), "uri") {
		if strings.HasPrefix(r, "mcptrunk://everything/") {
			t.Fatalf("setup: everything's resources were listed before it started")
		}
	}

	// The burst upstream.
	if !waitFor(ctx, 30*time.Second, func() bool {
		n := 0
		for _, m := range evTap.sent() {
			if m.Method == "notifications/tools/list_changed" {
				n++
			}
		}
		return n >= 3 // one per tool it registers for the capabilities: 4 here
	}) {
		var methods []string
		for _, m := range evTap.sent() {
			methods = append(methods, m.Method+" "+string(m.ID))
		}
		t.Fatalf("server-everything did not send its burst of tools/list_changed; it sent %q", methods)
	}
	// The host hears of it, then the trunk goes quiet.
	if !waitFor(ctx, 30*time.Second, func() bool { return listChanged("tools") > 0 }) {
		t.Fatal("the host never got tools/list_changed after everything arrived")
	}
	time.Sleep(1 * time.Second)
	if n := listChanged("tools"); n > 2 {
		t.Errorf("server-everything's arrival and burst of %d cost the host %d tools/list_changed, want at most 2", len(filterTap(evTap.sent(), "notifications/tools/list_changed")), n)
	}
	t.Logf("tools/list_changed: %d from everything, %d to the host", len(filterTap(evTap.sent(), "notifications/tools/list_changed")), listChanged("tools"))
	waitFor(ctx, 10*time.Second, func() bool { return listChanged("resources") > 0 })
	if n := listChanged("resources"); n < 1 || n > 2 {
		t.Errorf("everything's resources arrived with %d resources/list_changed, want 1 or 2", n)
	}
	if n := listChanged("prompts"); n != 0 {
		t.Errorf("the host never listed prompts but got %d prompts/list_changed", n)
	}
	var docs int
	for _, r := range keysOf(t, c.list(ctx, "resources/list", "resources"), "uri") {
		if strings.HasPrefix(r, "mcptrunk://everything/demo://resource/static/document/") {
			docs++
		}
	}
	if docs == 0 {
		t.Errorf("after resources/list_changed the host does not see everything's resources")
	}

	// The host ends with the full list: everything's tools as a direct
	// client with the same capabilities sees them.
	d := startRaw(t, "everything", exec.Command(argv[0], argv[1:]...))
	d.result(ctx, "initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"mcptrunk-protocol-raw","version":"0"}}`)
	d.notify("notifications/initialized", nil)
	var want, got []string
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := eventually(wctx, 200*time.Millisecond, func() error {
		want, got = nil, nil
		for _, n := range keysOf(t, d.list(ctx, "tools/list", "tools"), "name") {
			want = append(want, "mcp__everything__"+n)
		}
		sort.Strings(want)
		for _, n := range keysOf(t, c.list(ctx, "tools/list", "tools"), "name") {
			if strings.HasPrefix(n, "mcp__everything__") {
				got = append(got, n)
			}
		}
		if !slices.Contains(want, "mcp__everything__trigger-sampling-request") || !slices.Equal(want, got) {
			return fmt.Errorf("want %q, got %q", want, got)
		}
		return nil
	})
	if err != nil {
		t.Errorf("the host's tool list after the burst: %v", err)
	}

	// Changes made by tool calls: five concurrent calls that each re-add a
	// tool (or prompt) upstream.
	for _, kind := range []struct{ list, field, tool, item string }{
		{"tools", "tools", "test_trigger_tool_change", "mcp__conformance____transient_tool_for_list_changed"},
		{"prompts", "prompts", "test_trigger_prompt_change", "mcp__conformance____transient_prompt_for_list_changed"},
	} {
		before := keysOf(t, c.list(ctx, kind.list+"/list", kind.field), "name")
		if slices.Contains(before, kind.item) {
			t.Fatalf("%s is listed before it was added", kind.item)
		}
		n0 := listChanged(kind.list)
		others0 := listChanged("tools") + listChanged("prompts") - n0
		upstream0 := len(filterTap(cfTap.sent(), "notifications/"+kind.list+"/list_changed"))
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r, err := c.tryCall(ctx, "tools/call", `{"name":"mcp__conformance__`+kind.tool+`","arguments":{}}`); err != nil || r.Err != nil {
					t.Errorf("%s: %v %v", kind.tool, err, r.Err)
				}
			}()
		}
		wg.Wait()
		if !waitFor(ctx, 10*time.Second, func() bool { return listChanged(kind.list) > n0 }) {
			t.Errorf("no %s/list_changed after %s", kind.list, kind.tool)
		}
		time.Sleep(500 * time.Millisecond)
		upstream := len(filterTap(cfTap.sent(), "notifications/"+kind.list+"/list_changed")) - upstream0
		if delta := listChanged(kind.list) - n0; delta > 2 {
			t.Errorf("%d %s/list_changed from the conformance server cost the host %d", upstream, kind.list, delta)
		}
		if others := listChanged("tools") + listChanged("prompts") - listChanged(kind.list); others != others0 {
			t.Errorf("only %s changed, but the host was told of other lists too", kind.list)
		}
		if after := keysOf(t, c.list(ctx, kind.list+"/list", kind.field), "name"); !slices.Contains(after, kind.item) {
			t.Errorf("%s is not listed after %s: %q", kind.item, kind.tool, after)
		}
	}
}

func filterTap(msgs []tapMsg, method string) []tapMsg {
	var out []tapMsg
	for _, m := range msgs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// TestProtocolPagination: a catalog larger than a page (DefaultPageSize,
// 1000) reaches the host in pages whose union is the full sorted list, each
// item once, to the raw client and to go-sdk's iterator alike.
func TestProtocolPagination(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	servers := map[string]server{}
	for _, n := range []string{"n1", "n2", "n3"} {
		servers[n] = notesServer("-tools", "400")
	}
	cfg := writeConfig(t, servers, nil)
	c := startRawTrunk(t, ctx, cfg)
	direct := startRawDirect(t, ctx, "notes", notesBin, "-tools", "400")

	var all []string
	var sizes []int
	var params any
	for page := 0; ; page++ {
		if page == 10 {
			t.Fatal("more than 10 pages")
		}
		names, cursor, has := rawPage(t, c.result(ctx, "tools/list", params), "tools")
		all = append(all, names...)
		sizes = append(sizes, len(names))
		if !has {
			break
		}
		if cursor == "" {
			t.Fatal("an empty nextCursor")
		}
		params = map[string]string{"cursor": cursor}
	}
	t.Logf("pages of %v tools", sizes)
	if len(sizes) < 2 || sizes[0] != 1000 {
		t.Errorf("pages of %v: want a first page of 1000 and more pages", sizes)
	}
	if !slices.IsSorted(all) {
		t.Errorf("the union of the pages is not sorted")
	}
	if d := duplicates(all); len(d) > 0 {
		t.Errorf("tools listed twice across pages: %q", d)
	}
	var want []string
	for _, raw := range keysOf(t, direct.list(ctx, "tools/list", "tools"), "name") {
		for _, n := range []string{"n1", "n2", "n3"} {
			want = append(want, "mcp__"+n+"__"+raw)
		}
	}
	sort.Strings(want)
	var upstream []string
	for _, n := range all {
		if !strings.HasPrefix(n, "mcp__trunk__") {
			upstream = append(upstream, n)
		}
	}
	if len(want) < 1200 || !slices.Equal(upstream, want) {
		t.Errorf("the pages hold %d upstream tools, want the %d the servers offer", len(upstream), len(want))
	}

	// go-sdk follows the cursors to the same list.
	h := trunkHost(t, ctx, cfg, hostConfig{}, "")
	if got := toolNames(t, ctx, h.ClientSession); !slices.Equal(got, all) {
		t.Errorf("go-sdk's iterator saw %d tools, the raw pages %d", len(got), len(all))
	}

	// A cursor the trunk never made is refused.
	if r := c.call(ctx, "tools/list", `{"cursor":"%%%not-a-cursor"}`); r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("tools/list with a bad cursor: %s %v", r.Result, r.Err)
	}
}

// TestProtocolRevisions: hosts on 2025-06-18, 2025-11-25 and go-sdk's
// default (2026-07-28, which probes server/discover, gets -32601 and falls
// back to initialize) all work; raw hosts on older revisions get theirs,
// an unknown one the newest.
func TestProtocolRevisions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, nil)

	for _, version := range []string{"2025-06-18", "2025-11-25", ""} {
		name := version
		if name == "" {
			name = "go-sdk default"
		}
		t.Run(name, func(t *testing.T) {
			h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{full: true, roots: protoRoots}, version)
			want := version
			if want == "" {
				want = "2025-11-25"
			}
			if got := h.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			msgs := hostTap.received()
			if version == "" {
				if len(msgs) < 2 || msgs[0].Method != "server/discover" || msgs[1].Method != "initialize" {
					t.Fatalf("go-sdk's default handshake: %v", msgs)
				}
				ans := hostTap.waitSent(t, ctx, "the answer to server/discover", func(m tapMsg) bool {
					return m.Method == "" && string(m.ID) == string(msgs[0].ID)
				})
				if ans.Error == nil || ans.Error.Code != -32601 {
					t.Errorf("server/discover got %s, want error -32601", ans.Raw)
				}
			} else if len(msgs) == 0 || msgs[0].Method != "initialize" {
				t.Fatalf("handshake: %v", msgs)
			}
			if !strings.Contains(msgs[0].Raw+msgs[min(1, len(msgs)-1)].Raw, `"protocolVersion":"`+want+`"`) {
				t.Errorf("the host did not initialize with %s: %v", want, msgs[:min(2, len(msgs))])
			}

			if err := h.Ping(ctx, nil); err != nil {
				t.Errorf("ping: %v", err)
			}
			waitTools(t, ctx, h.ClientSession, "mcp__notes__echo")
			if got := callText(t, ctx, h.ClientSession, "mcp__notes__echo", map[string]any{"text": "rev " + name}); got != "rev "+name {
				t.Errorf("echo: %q", got)
			}
			p, err := h.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__notes__summarize", Arguments: map[string]string{"topic": "x"}})
			if err != nil || !strings.Contains(promptText(p), `"x"`) {
				t.Errorf("prompts/get: %v %s", err, mustJSON(p))
			}
			r, err := h.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptrunk://notes/notes://readme"})
			if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "mcptrunk-notes") {
				t.Errorf("resources/read: %v %s", err, mustJSON(r))
			}
		})
	}

	t.Run("raw", func(t *testing.T) {
		for version, want := range map[string]string{
			"2025-03-26": "2025-03-26",
			"2024-11-05": "2024-11-05",
			"2099-01-01": "2025-11-25",
		} {
			c := startRaw(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--config", cfg))
			if r := c.call(ctx, "server/discover", `{}`); r.Err == nil || r.Err.Code != -32601 {
				t.Errorf("server/discover: %s %v, want -32601", r.Result, r.Err)
			}
			res := c.result(ctx, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`)
			if got := getString(t, res, "protocolVersion"); got != want {
				t.Errorf("initialize %s: answered %s, want %s", version, got, want)
			}
			c.notify("notifications/initialized", nil)
			res = c.result(ctx, "tools/call", `{"name":"mcp__notes__echo","arguments":{"text":"raw `+version+`"}}`)
			if !strings.Contains(string(res), "raw "+version) {
				t.Errorf("%s: echo: %s", version, res)
			}
		}
	})
}

// TestProtocolErrorsVerbatim: JSON-RPC errors an upstream answers with
// (code, message, data) reach the host byte for byte.
func TestProtocolErrorsVerbatim(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	cfg := writeConfig(t, map[string]server{
		"notes":       notesServer(),
		"everything":  {"command": argv[0], "args": argv[1:], "timeouts": slowTimeouts},
		"conformance": {"command": conformanceBin(t)},
	}, map[string]any{"startupWait": "60s"})
	trunk := startRawTrunk(t, ctx, cfg)
	direct := map[string]*rawConn{
		"notes":       startRawDirect(t, ctx, "notes", notesBin),
		"everything":  startRawDirect(t, ctx, "everything", argv...),
		"conformance": startRawDirect(t, ctx, "conformance", conformanceBin(t)),
	}
	cases := []struct {
		name, server, method, direct, through string
	}{
		{"notes template with an unknown id", "notes", "resources/read",
			`{"uri":"notes://note/999"}`, `{"uri":"mcptrunk://notes/notes://note/999"}`},
		{"everything template with a bad id", "everything", "resources/read",
			`{"uri":"demo://resource/dynamic/text/abc"}`, `{"uri":"mcptrunk://everything/demo://resource/dynamic/text/abc"}`},
		{"everything prompt with a bad argument", "everything", "prompts/get",
			`{"name":"resource-prompt","arguments":{"resourceType":"Nope","resourceId":"1"}}`,
			`{"name":"mcp__everything__resource-prompt","arguments":{"resourceType":"Nope","resourceId":"1"}}`},
		{"conformance unknown resource (error data)", "conformance", "resources/read",
			`{"uri":"test://no-such-resource"}`, `{"uri":"mcptrunk://conformance/test://no-such-resource"}`},
		{"conformance missing capability (custom code and data)", "conformance", "tools/call",
			`{"name":"test_missing_capability","arguments":{}}`, `{"name":"mcp__conformance__test_missing_capability","arguments":{}}`},
		{"conformance tampered request state", "conformance", "tools/call",
			`{"name":"test_input_required_result_tampered_state","arguments":{},"requestState":"x-TAMPERED"}`,
			`{"name":"mcp__conformance__test_input_required_result_tampered_state","arguments":{},"requestState":"x-TAMPERED"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := direct[tc.server].call(ctx, tc.method, tc.direct)
			if want.Err == nil {
				t.Fatalf("directly, %s %s succeeded: %s", tc.method, tc.direct, want.Result)
			}
			got := trunk.call(ctx, tc.method, tc.through)
			if got.Err == nil {
				t.Fatalf("through the trunk, %s %s succeeded: %s", tc.method, tc.through, got.Result)
			}
			if a, b := mustJSON(want.Err), mustJSON(got.Err); a != b {
				t.Errorf("the error changed on the way:\ndirectly:          %s\nthrough the trunk: %s", a, b)
			}
			t.Logf("%s", mustJSON(got.Err))
		})
	}
}

// TestProtocolResultURIs: URIs inside results (resource links and embedded
// resources in tool results and prompt messages) come back in the
// mcptrunk://<server>/ form, with every other byte as the upstream sent
// it, and can be read back through the trunk.
func TestProtocolResultURIs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	argv := everythingArgv(t)
	cfg := writeConfig(t, map[string]server{
		"notes":       notesServer(),
		"weather":     weatherServer(),
		"everything":  {"command": argv[0], "args": argv[1:], "timeouts": slowTimeouts},
		"conformance": {"command": conformanceBin(t)},
	}, map[string]any{"startupWait": "60s"})
	trunk := startRawTrunk(t, ctx, cfg)
	direct := map[string]*rawConn{
		"notes":       startRawDirect(t, ctx, "notes", notesBin),
		"weather":     startRawDirect(t, ctx, "weather", weatherBin),
		"everything":  startRawDirect(t, ctx, "everything", argv...),
		"conformance": startRawDirect(t, ctx, "conformance", conformanceBin(t)),
	}

	// readBack reads a namespaced URI through the trunk and its raw URI
	// directly; both must succeed with the same contents apart from the uri.
	readBack := func(t *testing.T, server, uri string) {
		t.Helper()
		raw, ok := strings.CutPrefix(uri, "mcptrunk://"+server+"/")
		if !ok {
			t.Errorf("%q is not in %s's namespace", uri, server)
			return
		}
		got := trunk.result(ctx, "resources/read", map[string]string{"uri": uri})
		want := direct[server].result(ctx, "resources/read", map[string]string{"uri": raw})
		gotItems, wantItems := getField(t, got, "contents"), getField(t, want, "contents")
		var g, w []json.RawMessage
		_ = json.Unmarshal(gotItems, &g)
		_ = json.Unmarshal(wantItems, &w)
		if len(g) == 0 || len(g) != len(w) {
			t.Errorf("reading %s back: %s; directly %s", uri, got, want)
			return
		}
		for i := range g {
			if getString(t, g[i], "uri") != uri {
				t.Errorf("reading %s back: contents uri %q", uri, getString(t, g[i], "uri"))
			}
			// server-everything stamps its dynamic resources with the time.
			if server != "everything" {
				sameExceptField(t, "read back "+uri, w[i], g[i], "uri", raw, uri)
			}
		}
	}

	// checkContent compares one content block through the trunk with the
	// same block directly and returns the namespaced URI it carries ("" for
	// none).
	checkContent := func(t *testing.T, server string, d, g json.RawMessage) string {
		t.Helper()
		switch getString(t, g, "type") {
		case "resource_link":
			uri := getString(t, g, "uri")
			sameExceptField(t, "a resource_link", d, g, "uri", getString(t, d, "uri"), "mcptrunk://"+server+"/"+getString(t, d, "uri"))
			return uri
		case "resource":
			dr, gr := getField(t, d, "resource"), getField(t, g, "resource")
			var rewritten int
			dm, gm := decode(t, dr), decode(t, gr)
			unnamespace(t, gm, server, &rewritten)
			if server == "everything" { // it stamps resources with the time
				dm, gm = normaliseEverything(t, dm), normaliseEverything(t, gm)
			}
			if rewritten != 1 || mustJSON(dm) != mustJSON(gm) {
				t.Errorf("an embedded resource:\ndirectly:          %s\nthrough the trunk: %s", dr, gr)
			}
			a, b := objectFields(t, d), objectFields(t, g)
			if len(a) != len(b) {
				t.Errorf("an embedded resource block gained or lost members: %s -> %s", d, g)
			}
			return getString(t, gr, "uri")
		default:
			if compact(t, d) != compact(t, g) {
				t.Errorf("a %s block changed:\ndirectly:          %s\nthrough the trunk: %s", getString(t, g, "type"), d, g)
			}
		}
		return ""
	}

	type call struct {
		name, server, method, field, direct, through string
		readable                                     bool
	}
	calls := []call{
		{"notes rich", "notes", "tools/call", "content", `{"name":"rich","arguments":{}}`, `{"name":"mcp__notes__rich","arguments":{}}`, true},
		{"everything resource links", "everything", "tools/call", "content", `{"name":"get-resource-links","arguments":{"count":4}}`, `{"name":"mcp__everything__get-resource-links","arguments":{"count":4}}`, true},
		{"everything resource reference", "everything", "tools/call", "content", `{"name":"get-resource-reference","arguments":{"resourceType":"Text","resourceId":3}}`, `{"name":"mcp__everything__get-resource-reference","arguments":{"resourceType":"Text","resourceId":3}}`, true},
		{"conformance embedded resource", "conformance", "tools/call", "content", `{"name":"test_multiple_content_types","arguments":{}}`, `{"name":"mcp__conformance__test_multiple_content_types","arguments":{}}`, false},
		{"weather prompt", "weather", "prompts/get", "messages", `{"name":"plan_trip","arguments":{"city":"Oslo"}}`, `{"name":"mcp__weather__plan_trip","arguments":{"city":"Oslo"}}`, true},
		{"everything prompt", "everything", "prompts/get", "messages", `{"name":"resource-prompt","arguments":{"resourceType":"Blob","resourceId":"2"}}`, `{"name":"mcp__everything__resource-prompt","arguments":{"resourceType":"Blob","resourceId":"2"}}`, true},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			d := direct[c.server].result(ctx, c.method, c.direct)
			g := trunk.result(ctx, c.method, c.through)
			var dItems, gItems []json.RawMessage
			if err := json.Unmarshal(getField(t, d, c.field), &dItems); err != nil {
				t.Fatalf("directly: %s", d)
			}
			if err := json.Unmarshal(getField(t, g, c.field), &gItems); err != nil || len(gItems) != len(dItems) {
				t.Fatalf("through the trunk: %s\ndirectly: %s", g, d)
			}
			var uris []string
			for i := range dItems {
				dc, gc := dItems[i], gItems[i]
				if c.field == "messages" {
					a, b := objectFields(t, dc), objectFields(t, gc)
					if len(a) != len(b) {
						t.Errorf("a prompt message gained or lost members: %s -> %s", dc, gc)
					}
					for j := range min(len(a), len(b)) {
						if a[j].key != b[j].key || (a[j].key != "content" && compact(t, a[j].value) != compact(t, b[j].value)) {
							t.Errorf("a prompt message changed: %s -> %s", dc, gc)
						}
					}
					dc, gc = getField(t, dc, "content"), getField(t, gc, "content")
				}
				if u := checkContent(t, c.server, dc, gc); u != "" {
					uris = append(uris, u)
				}
			}
			if len(uris) == 0 {
				t.Fatalf("no URI in %s", g)
			}
			t.Logf("URIs: %q", uris)
			if c.readable {
				for _, u := range uris {
					readBack(t, c.server, u)
				}
			}
		})
	}
}

// TestProtocolServerRequestExtras: URL-mode elicitation and its
// notifications/elicitation/complete, an upstream cancelling its own
// request to the host (the trunk cancels the host's copy), and a ping from
// an upstream (answered by the trunk).
func TestProtocolServerRequestExtras(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	pSrv, pTap := tapped(t, probeBin(t))
	cfg := writeConfig(t, map[string]server{"probe": pSrv, "probe2": {"command": probeBin(t)}}, nil)
	h, hostTap := trunkHostTapped(t, ctx, cfg, hostConfig{full: true, roots: protoRoots, urlElicitation: true}, "")

	t.Run("url elicitation and elicitation/complete", func(t *testing.T) {
		if got := callText(t, ctx, h.ClientSession, "mcp__probe__url_elicitation", map[string]any{"id": "el-42"}); got != "action=decline" {
			t.Errorf("url_elicitation: %q", got)
		}
		h.rec.mu.Lock()
		var last *mcp.ElicitParams
		if len(h.rec.elicit) > 0 {
			last = h.rec.elicit[len(h.rec.elicit)-1]
		}
		h.rec.mu.Unlock()
		if last == nil || last.Mode != "url" || last.URL != "https://example.com/consent" || last.ElicitationID != "el-42" {
			t.Errorf("the host got elicitation %s", mustJSON(last))
		}
		if !waitFor(ctx, 5*time.Second, func() bool {
			h.rec.mu.Lock()
			defer h.rec.mu.Unlock()
			return slices.Contains(h.rec.elicitComplete, "el-42")
		}) {
			t.Errorf("notifications/elicitation/complete for el-42 never reached the host")
		}
	})

	t.Run("upstream cancels its request", func(t *testing.T) {
		got := callText(t, ctx, h.ClientSession, "mcp__probe__abandoned_elicitation", nil)
		if !strings.Contains(got, "deadline exceeded") {
			t.Errorf("abandoned_elicitation: %q", got)
		}
		req := pTap.waitSent(t, ctx, "the probe's elicitation/create", func(m tapMsg) bool {
			return m.Method == "elicitation/create" && strings.Contains(m.Raw, hostBlocks)
		})
		pTap.waitSent(t, ctx, "the probe's notifications/cancelled", func(m tapMsg) bool {
			return m.Method == "notifications/cancelled" && strings.Contains(m.Raw, `"requestId":`+string(req.ID))
		})
		hostReq := hostTap.waitSent(t, ctx, "the elicitation/create the trunk sent the host", func(m tapMsg) bool {
			return m.Method == "elicitation/create" && strings.Contains(m.Raw, hostBlocks)
		})
		hostTap.waitSent(t, ctx, "the trunk's notifications/cancelled to the host", func(m tapMsg) bool {
			return m.Method == "notifications/cancelled" && strings.Contains(m.Raw, `"requestId":`+string(hostReq.ID))
		})
		if !waitFor(ctx, 5*time.Second, func() bool {
			h.rec.mu.Lock()
			defer h.rec.mu.Unlock()
			return h.rec.elicitCancelled == 1
		}) {
			t.Errorf("the host's elicitation handler was not cancelled")
		}
	})

	t.Run("the host's progress for a forwarded request", func(t *testing.T) {
		// Both probes use progressToken 7 for their sampling requests, at
		// the same time: each must get exactly its own two notifications.
		var wg sync.WaitGroup
		got := make([]string, 2)
		for i, name := range []string{"mcp__probe__sampling_with_progress", "mcp__probe2__sampling_with_progress"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err != nil {
					got[i] = err.Error()
					return
				}
				got[i] = toolText(res)
			}()
		}
		wg.Wait()
		for i, g := range got {
			if g != "progress: 7:1/2 7:2/2" {
				t.Errorf("probe %d: %q, want its own two progress notifications with its own token", i+1, g)
			}
		}
		// The host saw tokens the trunk made up, not 7.
		for _, m := range hostTap.sent() {
			if m.Method == "sampling/createMessage" && strings.Contains(m.Raw, `"progressToken":7`) {
				t.Errorf("the host got an upstream's own progress token: %s", m.Raw)
			}
		}
	})

	t.Run("ping from the upstream", func(t *testing.T) {
		if got := callText(t, ctx, h.ClientSession, "mcp__probe__ping_client", nil); got != "ping: <nil>" {
			t.Errorf("ping_client: %q", got)
		}
	})
}

// TestProtocolTasksUnsupported: mcptrunk does not offer tasks: it declares
// no tasks capability, tells no upstream the host has one, and answers
// tasks/* with method-not-found instead of leaving the host waiting.
func TestProtocolTasksUnsupported(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	nSrv, nTap := tapped(t, notesBin)
	cfg := writeConfig(t, map[string]server{"notes": nSrv}, nil)
	c, init := rawInit(t, ctx, cfg, "2025-11-25", `{"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}}}},"sampling":{}}`)
	if caps := getField(t, init, "capabilities"); getField(t, caps, "tasks") != nil {
		t.Errorf("mcptrunk declares tasks: %s", caps)
	}
	if caps := initCaps(t, nTap.waitReceived(t, ctx, "notes' initialize", isMethod("initialize"))); caps["tasks"] != nil || caps["sampling"] == nil {
		t.Errorf("notes was told %q, want sampling and no tasks", sortedKeys(caps))
	}
	for _, m := range []string{"tasks/list", "tasks/get", "tasks/result", "tasks/cancel"} {
		if r := c.call(ctx, m, `{"taskId":"x"}`); r.Err == nil || r.Err.Code != -32601 {
			t.Errorf("%s: %s %v, want -32601", m, r.Result, r.Err)
		}
	}
}
