package main

// Protocol fidelity (see protocol_server_requests_test.go):
// completion/complete.

import (
	"encoding/json"
	"testing"
	"time"
)

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
	cfSrv = pinLegacy(cfSrv) // its tap checks the params exactly as the host sent them
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
