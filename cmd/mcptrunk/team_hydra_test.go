package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/testkit/hydra"
)

// docs/examples/team.json with Ory Hydra as the team's authorization
// server, as docs/security.md sets it up: two users sign in through
// Hydra's authorization code flow (PKCE, its login and consent) and get
// JWT access tokens for the trunk, carrying their groups; through one
// trunk each sees what the policy allows. Hydra types its access tokens
// "JWT", so the config adds tokenTypes; without it the same token is
// refused with 401. A token Hydra minted for another audience is refused.
func TestTeamWithHydra(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 12*time.Minute) // the first run on a machine builds Hydra
	idp := hydra.Start(t, ctx, map[string]map[string]any{
		"ada": {"groups": []string{"admin"}},
		"sam": {"groups": []string{"support"}},
	})
	const trunkURL = "http://trunk.test"
	client := idp.Client(t, trunkURL+"/mcp", "http://elsewhere.test/mcp")
	adaToken := idp.Token(t, ctx, client, "ada", trunkURL+"/mcp", "openid mcp")
	samToken := idp.Token(t, ctx, client, "sam", trunkURL+"/mcp", "openid mcp")
	elsewhere := idp.Token(t, ctx, client, "ada", "http://elsewhere.test/mcp", "openid mcp")

	start := func(tokenTypes []string) *httpTrunk {
		t.Helper()
		var doc map[string]any
		raw, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "examples", "team.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if tokenTypes != nil {
			doc["trunk"].(map[string]any)["http"].(map[string]any)["auth"].(map[string]any)["tokenTypes"] = tokenTypes
		}
		dir := t.TempDir()
		cfg := filepath.Join(dir, "team.json")
		raw, _ = json.Marshal(doc)
		if err := os.WriteFile(cfg, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := trunkCmd(newTag(t), "serve", "--http", "127.0.0.1:0", "--config", cfg)
		cmd.Env = append(cmd.Env, "ISSUER_URL="+idp.Issuer, "TRUNK_URL="+trunkURL, "MCPTRUNK_BIN="+binDir)
		return serveHTTP(t, ctx, "mcptrunk serve --http (team.json, Hydra)", cmd)
	}
	initialize := func(trunk *httpTrunk, token string) int {
		t.Helper()
		reply, err := postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, map[string]string{"Authorization": "Bearer " + token})
		if err != nil {
			t.Fatal(err)
		}
		return reply.status
	}

	strict := start(nil)
	if got := initialize(strict, adaToken); got != http.StatusUnauthorized {
		t.Errorf("Hydra's typ JWT token at a trunk without tokenTypes: HTTP %d, want 401", got)
	}

	trunk := start([]string{"at+jwt", "JWT"})
	if got := initialize(trunk, elsewhere); got != http.StatusUnauthorized {
		t.Errorf("a Hydra token for another audience: HTTP %d, want 401", got)
	}
	servers := func(token string) []string {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "team", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: trunk.url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatalf("connecting with a Hydra token: %v", err)
		}
		defer cs.Close()
		return serversListed(t, ctx, cs)
	}
	if got := servers(adaToken); !slices.Equal(got, []string{"notes", "trunk", "weather"}) {
		t.Errorf("ada (admin in Hydra) sees the servers %v, want notes, trunk and weather", got)
	}
	if got := servers(samToken); !slices.Equal(got, []string{"weather"}) {
		t.Errorf("sam (support in Hydra) sees the servers %v, want weather alone", got)
	}
}
