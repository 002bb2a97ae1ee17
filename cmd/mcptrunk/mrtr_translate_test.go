package main

// Multi-round-trip translation for a host at the stateless revision whose
// upstream speaks 2025-11-25: the upstream's elicitation request becomes an
// input_required result with a requestState of the trunk's own, which the
// trunk alone can make and accepts once.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// statelessMeta is the per-request _meta of a host at 2026-07-28 that
// declares caps (JSON).
func statelessMeta(caps string) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(caps),
		"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "mcptrunk-e2e-stateless", "version": "0"},
	}
}

// inputRequiredResult is what the test reads of an input_required result.
type inputRequiredResult struct {
	ResultType    string `json:"resultType"`
	RequestState  string `json:"requestState"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func TestMRTRParkedRequestState(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	cfg := writeConfig(t, map[string]server{
		"rev2025": {"command": conformanceBin(t), "protocolVersion": "2025-11-25", "timeouts": map[string]string{"call": "4s"}},
	}, map[string]any{"startupWait": "60s"})
	host := startRaw(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--config", cfg))
	meta := statelessMeta(`{"elicitation":{}}`)
	host.result(ctx, "server/discover", map[string]any{"_meta": meta})

	call := func(extra map[string]any) rawResponse {
		params := map[string]any{"name": "mcp__rev2025__test_elicitation", "arguments": map[string]any{"message": "Who are you?"}, "_meta": meta}
		for k, v := range extra {
			params[k] = v
		}
		return host.call(ctx, "tools/call", params)
	}
	first := func() inputRequiredResult {
		t.Helper()
		r := call(nil)
		if r.Err != nil {
			t.Fatalf("tools/call: %v", r.Err)
		}
		var ir inputRequiredResult
		if err := json.Unmarshal(r.Result, &ir); err != nil {
			t.Fatal(err)
		}
		if ir.ResultType != "input_required" || len(ir.InputRequests) != 1 || ir.RequestState == "" {
			t.Fatalf("the upstream's elicitation did not become input_required: %s", r.Result)
		}
		return ir
	}
	ir := first()
	var key string
	for k, req := range ir.InputRequests {
		key = k
		if req.Method != "elicitation/create" || !strings.Contains(string(req.Params), "Who are you?") {
			t.Fatalf("input request %q = %s %s, want the upstream's elicitation/create", k, req.Method, req.Params)
		}
	}
	answer := map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"username": "ada"}}}

	// A state in the trunk's form that the trunk did not make, or one
	// changed by a byte, is refused and answers nothing. (A state not in
	// the trunk's form is the upstream's own, from an input_required it
	// sent itself, and goes to it with the retry: the upstream checks it.)
	tampered := ir.RequestState[:len(ir.RequestState)-2] + "xx"
	prefix, _, _ := strings.Cut(ir.RequestState, ".")
	for name, state := range map[string]string{"tampered": tampered, "forged": prefix + ".AAAAAAAAAAEAAAAA.bm90IGEgbWFj", "truncated": prefix + "."} {
		r := call(map[string]any{"inputResponses": answer, "requestState": state})
		if r.Err == nil || r.Err.Code != -32602 || !strings.Contains(r.Err.Message, "requestState") {
			t.Errorf("%s requestState: got %s %+v, want -32602 naming requestState", name, r.Result, r.Err)
		}
	}

	// Members of the wrong shape are named.
	for name, extra := range map[string]map[string]any{
		"requestState":   {"inputResponses": answer, "requestState": 5},
		"inputResponses": {"inputResponses": []int{1}, "requestState": ir.RequestState},
	} {
		r := call(extra)
		if r.Err == nil || r.Err.Code != -32602 || !strings.Contains(r.Err.Message, "params."+name) {
			t.Errorf("a bad %s: got %s %+v, want -32602 naming params.%s", name, r.Result, r.Err, name)
		}
	}

	// The true state completes the call with the host's answer.
	r := call(map[string]any{"inputResponses": answer, "requestState": ir.RequestState})
	if r.Err != nil {
		t.Fatalf("retry: %v", r.Err)
	}
	var done inputRequiredResult
	if err := json.Unmarshal(r.Result, &done); err != nil {
		t.Fatal(err)
	}
	if done.ResultType == "input_required" || len(done.Content) != 1 || !strings.Contains(done.Content[0].Text, "action=accept") || !strings.Contains(done.Content[0].Text, "ada") {
		t.Fatalf("retry result = %s, want the upstream's result with the host's answer", r.Result)
	}

	// The same state again is a replay.
	r = call(map[string]any{"inputResponses": answer, "requestState": ir.RequestState})
	if r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("replayed requestState: got %s %+v, want -32602", r.Result, r.Err)
	}

	// A host that never retries: the exchange is given up after the
	// server's call timeout, and nothing stays parked.
	abandoned := first()
	if n := parkedCalls(t, ctx, host, meta); n != 1 {
		t.Fatalf("parkedCalls = %d while a round waits, want 1", n)
	}
	if !waitFor(ctx, 30*time.Second, func() bool { return parkedCalls(t, ctx, host, meta) == 0 }) {
		t.Fatalf("the abandoned exchange is still parked")
	}
	r = call(map[string]any{"inputResponses": answer, "requestState": abandoned.RequestState})
	if r.Err == nil || r.Err.Code != -32602 {
		t.Errorf("the abandoned round's state: got %s %+v, want -32602", r.Result, r.Err)
	}
	// The upstream is still usable.
	ir = first()
	r = call(map[string]any{"inputResponses": map[string]any{firstKey(ir): answer[key]}, "requestState": ir.RequestState})
	if r.Err != nil || strings.Contains(string(r.Result), "input_required") {
		t.Fatalf("after an abandoned round: %s %+v", r.Result, r.Err)
	}
}

func firstKey(ir inputRequiredResult) string {
	for k := range ir.InputRequests {
		return k
	}
	return ""
}

// parkedCalls reads the trunk's status for how many exchanges wait.
func parkedCalls(t testing.TB, ctx context.Context, host *rawConn, meta map[string]any) int {
	t.Helper()
	res := host.result(ctx, "resources/read", map[string]any{"uri": "mcptrunk://trunk/status", "_meta": meta})
	var read struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(res, &read); err != nil || len(read.Contents) == 0 {
		t.Fatalf("status: %s %v", res, err)
	}
	var status struct {
		ParkedCalls *int `json:"parkedCalls"`
	}
	if err := json.Unmarshal([]byte(read.Contents[0].Text), &status); err != nil || status.ParkedCalls == nil {
		t.Fatalf("status has no parkedCalls: %s %v", read.Contents[0].Text, err)
	}
	return *status.ParkedCalls
}

// TestStatelessHostNotAskedOutsideACall: a 2025 upstream's request
// outside any call (server-filesystem asks for the roots once it is
// initialized, when the client declares them) is refused to the upstream
// for a host at 2026-07-28, whose revision has no server-to-client
// requests, and the server goes on working with its own directories.
func TestStatelessHostNotAskedOutsideACall(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	node, _, filesystem := npmServers(t)
	root := t.TempDir()
	fsSrv, tp := tapped(t, node, filesystem, root)
	fsSrv["timeouts"] = map[string]string{"connect": "60s", "list": "60s", "call": "60s"}
	cfg := writeConfig(t, map[string]server{"fs": fsSrv}, map[string]any{"startupWait": "60s"})
	host := startRaw(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--config", cfg))
	meta := statelessMeta(`{"roots":{"listChanged":true}}`)
	host.result(ctx, "server/discover", map[string]any{"_meta": meta})

	ask := tp.waitSent(t, ctx, "the server's roots/list", func(m tapMsg) bool { return m.Method == "roots/list" })
	answer := tp.waitReceived(t, ctx, "the answer to roots/list", func(m tapMsg) bool {
		return m.Method == "" && string(m.ID) == string(ask.ID)
	})
	if answer.Error == nil || answer.Error.Code != -32601 || !strings.Contains(answer.Error.Message, "2026-07-28") {
		t.Errorf("the upstream's roots/list outside a call was answered %s, want -32601 naming the host's revision", answer.Raw)
	}
	for _, n := range host.stdoutLines() {
		if strings.Contains(string(n), `"method":"roots/list"`) {
			t.Errorf("the host at 2026-07-28 was sent a request: %s", n)
		}
	}
	res := host.result(ctx, "tools/call", map[string]any{"name": "mcp__fs__list_allowed_directories", "arguments": map[string]any{}, "_meta": meta})
	if !strings.Contains(string(res), filepathBase(root)) {
		t.Errorf("list_allowed_directories after the refused roots/list: %s, want its own directory", res)
	}
}

// filepathBase is the last element of a path, as a JSON-safe substring.
func filepathBase(p string) string {
	i := strings.LastIndexAny(p, `/\`)
	return p[i+1:]
}
