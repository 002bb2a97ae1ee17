package main

// Protocol fidelity (see protocol_server_requests_test.go): upstream
// JSON-RPC errors as sent.

import (
	"testing"
	"time"
)

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
