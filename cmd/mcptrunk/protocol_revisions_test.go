package main

// Protocol fidelity (see protocol_server_requests_test.go): the protocol
// revisions hosts ask for.

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProtocolRevisions: hosts on 2025-06-18, 2025-11-25 and go-sdk's
// default (2026-07-28: server/discover, no initialize) all work; raw hosts
// on older revisions get theirs, an unknown one the newest 2025-era one.
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
				want = "2026-07-28"
			}
			if got := h.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			msgs := hostTap.received()
			if version == "" {
				if len(msgs) == 0 || msgs[0].Method != "server/discover" {
					t.Fatalf("go-sdk's default handshake: %v", msgs)
				}
				for _, m := range msgs {
					if m.Method == "initialize" {
						t.Errorf("a host at 2026-07-28 fell back to initialize: %s", m.Raw)
					}
				}
				ans := hostTap.waitSent(t, ctx, "the answer to server/discover", func(m tapMsg) bool {
					return m.Method == "" && string(m.ID) == string(msgs[0].ID)
				})
				if ans.Error != nil || !containsAll(ans.Raw, `"resultType":"complete"`, `"supportedVersions":["2026-07-28","2025-11-25"`,
					`"io.modelcontextprotocol/serverInfo":{"name":"mcptrunk"`, `"tools":{"listChanged":true}`) {
					t.Errorf("server/discover got %s, want the trunk's discover result", ans.Raw)
				}
				if !strings.Contains(msgs[0].Raw, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
					t.Errorf("the host did not discover at 2026-07-28: %s", msgs[0].Raw)
				}
				// go-sdk sends ping without the request _meta: a request of
				// no revision of its own, answered as before 2026-07-28
				// (TestStatelessHostRaw: with the _meta it is -32601).
				if err := h.Ping(ctx, nil); err != nil {
					t.Errorf("ping: %v", err)
				}
			} else {
				if len(msgs) == 0 || msgs[0].Method != "initialize" {
					t.Fatalf("handshake: %v", msgs)
				}
				if !strings.Contains(msgs[0].Raw, `"protocolVersion":"`+want+`"`) {
					t.Errorf("the host did not initialize with %s: %v", want, msgs[0])
				}
				if err := h.Ping(ctx, nil); err != nil {
					t.Errorf("ping: %v", err)
				}
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
			// A probe without _meta is answered: the revisions it lists let
			// the host fall back to initialize.
			if r := c.call(ctx, "server/discover", `{}`); r.Err != nil || !strings.Contains(string(r.Result), `"supportedVersions":["2026-07-28","2025-11-25"`) {
				t.Errorf("server/discover: %s %v, want the revisions", r.Result, r.Err)
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
