package main

// The revision matrix: every pairing of the host's protocol revision with an
// upstream's, each compared directly and through the trunk by the
// differential machinery (differential_test.go), and two hosts of different
// revisions on one config.

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// matrixUpstream is one upstream of the matrix.
type matrixUpstream struct {
	name string // the server's name in the config and the subtest's
	argv func(t *testing.T) []string
	plan diffPlan
	// config: more members of its config entry.
	config server
	// speaks: the revision the trunk speaks with the upstream, given the
	// host's.
	speaks func(host string) string
	// direct: the revision the direct client must ask for, given the
	// host's ("" is go-sdk's default).
	direct func(host string) string
}

// sameAsHost: the direct client asks the upstream for what the host asks
// the trunk for.
func sameAsHost(host string) string { return host }

// only2025: the direct client asks for 2025-11-25 whatever the host asks
// the trunk for. For an upstream the trunk is told to speak 2025-11-25 to
// (its "protocolVersion"), that is what the trunk itself asks it for: the
// direct session then reaches the same code paths of the upstream as the
// trunk does, and the comparison shows whether the trunk turns a 2025-11-25
// upstream into the host's revision without changing what the host gets.
// A direct client on 2026-07-28 would take other paths in the upstream
// (input_required results instead of server requests), and its results
// would differ for reasons that have nothing to do with the trunk.
func only2025(string) string { return rev2025 }

// statelessOnly: the direct client asks for 2026-07-28 whatever the host
// asks the trunk for. For an upstream the trunk is told to speak 2026-07-28
// to (its "protocolVersion"), that is what the trunk itself speaks to it:
// the direct session then reaches the same code paths of the upstream as
// the trunk does (input_required results rather than server requests), and
// the comparison shows whether the trunk turns a 2026-07-28 upstream into
// the host's revision without changing what the host gets; for a
// 2025-11-25 host, that is the trunk fulfilling the upstream's
// input_required results with real requests to the host. A direct client on
// 2025-11-25 would take other paths in the upstream (requests sent during
// the call), and its results would differ for reasons that have nothing to
// do with the trunk.
func statelessOnly(string) string { return revStateless }

// speaksHost: the upstream offers both revisions and is left to the trunk
// ("protocolVersion" unset), which speaks to it at the host's revision:
// 2025-11-25 for a 2025-era host (initialize first), so that the server
// behaves for it as it would directly, 2026-07-28 for a stateless host.
func speaksHost(host string) string { return host }

// speaksOnly: the trunk speaks rev to the upstream whatever the host's (the
// only one the upstream knows, or the one its config entry pins).
func speaksOnly(rev string) func(string) string { return func(string) string { return rev } }

func matrixUpstreams() []matrixUpstream {
	return []matrixUpstream{
		{
			name: "conformance", plan: conformancePlan, speaks: speaksHost, direct: sameAsHost,
			argv: func(t *testing.T) []string { return []string{conformanceBin(t)} },
		},
		{
			name: "rev2025", plan: conformancePlan, speaks: speaksOnly(rev2025), direct: only2025,
			argv:   func(t *testing.T) []string { return []string{conformanceBin(t)} },
			config: server{"protocolVersion": rev2025},
		},
		{
			name: "modern", plan: conformancePlan, speaks: speaksOnly(revStateless), direct: statelessOnly,
			argv:   func(t *testing.T) []string { return []string{conformanceBin(t)} },
			config: server{"protocolVersion": revStateless},
		},
		{
			name: "notes", plan: notesPlan, speaks: speaksHost, direct: sameAsHost,
			argv: func(*testing.T) []string { return []string{notesBin} },
		},
		{
			// TypeScript SDK v1: 2025-11-25 only. go-sdk's default client
			// falls back to it directly, as the trunk does.
			name: "everything", plan: everythingPlan, speaks: speaksOnly(rev2025), direct: sameAsHost,
			argv: func(t *testing.T) []string { return everythingArgv(t) },
		},
	}
}

// TestRevisionMatrix: for each host revision (a go-sdk host pinned to
// 2025-11-25, and go-sdk's default, 2026-07-28) and each upstream
// (go-sdk's conformance server, which offers both revisions and which the
// trunk speaks the host's revision to; the same server pinned to 2025-11-25
// by its "protocolVersion"; the same server pinned to 2026-07-28;
// mcptrunk-notes on mcp-go, which offers both revisions too;
// server-everything on the TypeScript SDK v1, 2025-11-25 only), everything
// the upstream offers gives the same result or error, progress and log
// messages through the trunk as directly at the upstream's revision. The
// conformance server's input_required tools and prompt (multi-round-trip
// on 2026-07-28, server requests on 2025-11-25) and its server-request
// tools (test_sampling, test_elicitation, which fail at 2026-07-28, where
// the server cannot send requests during a call) are among what is
// compared, answered by the same handlers on both paths; with a 2025-11-25
// host and the upstream pinned to 2026-07-28, the trunk fulfils the
// upstream's input_required results with real requests to the host. Each
// cell also checks the revision the host got and the one the trunk spoke to
// the upstream.
func TestRevisionMatrix(t *testing.T) {
	t.Parallel()
	hosts := []struct {
		name, version, want string
	}{
		{"host=2025-11-25", rev2025, rev2025},
		{"host=2026-07-28", "", revStateless}, // go-sdk's default
	}
	for _, h := range hosts {
		for _, u := range matrixUpstreams() {
			t.Run(h.name+"/upstream="+u.name, func(t *testing.T) {
				t.Parallel()
				direct := u.direct(h.version)
				speaks := u.speaks(h.want)
				wantDirect := direct
				if wantDirect == "" {
					wantDirect = h.want
					if speaks == rev2025 {
						wantDirect = rev2025 // go-sdk's fallback
					}
				}
				runDiffCell(t, u.name, u.argv(t), u.plan, diffCell{
					host: h.version, direct: direct, config: u.config,
					wantHost: h.want, wantDirect: wantDirect, wantUpstream: speaks,
				})
			})
		}
	}
}

// TestRevisionsBothHostsOneConfig: one config, two `mcptrunk serve`
// processes at once: go-sdk's default host gets 2026-07-28 and a go-sdk
// host pinned to 2025-11-25 gets 2025-11-25, and both list and call every
// upstream (one the trunk speaks 2026-07-28 to, one pinned to 2025-11-25,
// one that speaks only 2025-11-25).
func TestRevisionsBothHostsOneConfig(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	everything := everythingArgv(t)
	cfg := writeConfig(t, map[string]server{
		"conformance": {"command": conformanceBin(t)},
		"rev2025":     {"command": conformanceBin(t), "protocolVersion": rev2025},
		"notes":       notesServer(),
		"everything":  {"command": everything[0], "args": everything[1:], "timeouts": slowTimeouts},
	}, map[string]any{"startupWait": "60s"})
	hc := hostConfig{full: true, roots: protoRoots}
	hosts := []struct {
		name    string
		version string
		want    string
	}{
		{"go-sdk default", "", revStateless},
		{"pinned to 2025-11-25", rev2025, rev2025},
	}
	type session struct {
		name, want string
		h          *host
	}
	var sessions []session
	for _, hs := range hosts {
		// Both trunks run at once: the second starts before the first is
		// used.
		sessions = append(sessions, session{hs.name, hs.want, startHost(t, ctx, exec.Command(trunkBin, "serve", "--config", cfg), hc, hs.version)})
	}
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"mcp__conformance__test_simple_text", map[string]any{}, "This is a simple text response for testing."},
		{"mcp__conformance__test_input_required_result_elicitation", map[string]any{}, "Hello, Ada!"},
		{"mcp__rev2025__test_simple_text", map[string]any{}, "This is a simple text response for testing."},
		{"mcp__rev2025__test_input_required_result_elicitation", map[string]any{}, "Hello, Ada!"},
		{"mcp__notes__echo", map[string]any{"text": "both revisions"}, "both revisions"},
		{"mcp__everything__echo", map[string]any{"message": "both revisions"}, "Echo: both revisions"},
	}
	for _, s := range sessions {
		t.Run(s.name, func(t *testing.T) {
			if got := s.h.InitializeResult().ProtocolVersion; got != s.want {
				t.Errorf("negotiated %q, want %q", got, s.want)
			}
			var want []string
			for _, c := range calls {
				want = append(want, c.tool)
			}
			names := waitTools(t, ctx, s.h.ClientSession, want...)
			for _, prefix := range []string{"mcp__conformance__", "mcp__rev2025__", "mcp__notes__", "mcp__everything__"} {
				if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
					t.Errorf("no tool %s*: %q", prefix, names)
				}
			}
			for _, c := range calls {
				res, err := s.h.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				switch {
				case err != nil:
					t.Errorf("%s: %v", c.tool, err)
				case res.IsError || toolText(res) != c.want:
					t.Errorf("%s: %s, want the text %q", c.tool, mustJSON(res), c.want)
				}
			}
			r, err := s.h.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptrunk://notes/notes://readme"})
			if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "mcptrunk-notes") {
				t.Errorf("resources/read: %v %s", err, mustJSON(r))
			}
		})
	}
}
