package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
)

// docs/examples/team.json as a team runs it: serve --http with the
// issuer, the trunk's URL and the example servers from the environment.
// Two users through one trunk see what the policy allows them, the
// profile's endpoint shows its server alone and takes tokens minted for
// it, and the trunk's endpoint refuses those.
func TestTeamExample(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	iss := testissuer.New(t)
	dir := t.TempDir() // the example writes its audit log beside itself
	example, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "examples", "team.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "team.json")
	if err := os.WriteFile(cfg, example, 0o600); err != nil {
		t.Fatal(err)
	}
	const trunkURL = "http://trunk.test"
	cmd := trunkCmd(newTag(t), "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = append(cmd.Env, "ISSUER_URL="+iss.URL, "TRUNK_URL="+trunkURL, "MCPTRUNK_BIN="+binDir)
	trunk := serveHTTP(t, ctx, "mcptrunk serve --http (team.json)", cmd)

	connect := func(endpoint, token string) *mcp.ClientSession {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "team", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatalf("connecting to %s: %v", endpoint, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	claims := func(groups ...string) map[string]any {
		return map[string]any{"scope": "mcp", "groups": groups}
	}
	admin := connect(trunk.url, iss.Token(t, "ada", trunkURL+"/mcp", claims("admin")))
	support := connect(trunk.url, iss.Token(t, "sam", trunkURL+"/mcp", claims("support")))
	profileToken := iss.Token(t, "ada", trunkURL+"/mcp/p/weather", claims("admin"))
	adminWeather := connect(trunk.url+"/p/weather", profileToken)

	if got := serversListed(t, ctx, admin); !slices.Equal(got, []string{"notes", "trunk", "weather"}) {
		t.Errorf("admin sees the servers %v, want notes, trunk and weather", got)
	}
	if got := serversListed(t, ctx, support); !slices.Equal(got, []string{"weather"}) {
		t.Errorf("support sees the servers %v, want weather alone", got)
	}
	if got := serversListed(t, ctx, adminWeather); !slices.Equal(got, []string{"trunk", "weather"}) {
		t.Errorf("admin on /mcp/p/weather sees the servers %v, want the trunk's own tools and weather", got)
	}
	res, err := support.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "mcp__notes__echo"`) {
		t.Errorf("support calling notes: %v, %v; want unknown tool", res, err)
	}
	if _, err := support.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__weather__forecast", Arguments: map[string]any{"city": "Oslo"}}); err != nil {
		t.Errorf("support calling forecast: %v", err)
	}

	// The profile's token is the profile's: the trunk's endpoint refuses it.
	reply, err := postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, map[string]string{"Authorization": "Bearer " + profileToken})
	if err != nil {
		t.Fatal(err)
	}
	if reply.status != http.StatusUnauthorized {
		t.Errorf("a token minted for the profile at the trunk's endpoint: HTTP %d, want 401", reply.status)
	}
	// Each profile is a resource of its own, with its own metadata.
	reply, err = postMCP(ctx, trunk.url+"/p/weather", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := reply.header.Get("WWW-Authenticate"); reply.status != http.StatusUnauthorized || !strings.Contains(c, `/.well-known/oauth-protected-resource/mcp/p/weather"`) {
		t.Errorf("no token at the profile: HTTP %d, WWW-Authenticate %q", reply.status, c)
	}
	meta, err := httpClient(t).Get("http://" + trunk.addr + "/.well-known/oauth-protected-resource/mcp/p/weather")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Resource string }
	_ = json.NewDecoder(meta.Body).Decode(&doc)
	_ = meta.Body.Close()
	if doc.Resource != trunkURL+"/mcp/p/weather" {
		t.Errorf("the profile's metadata names the resource %q", doc.Resource)
	}

	// The refused call is audited with its caller.
	if !waitFor(ctx, 20*time.Second, func() bool {
		audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		for _, line := range strings.Split(string(audit), "\n") {
			if strings.Contains(line, `"subject":"sam"`) && strings.Contains(line, `mcp__notes__echo`) {
				return true
			}
		}
		return false
	}) {
		audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		t.Errorf("no audit line of sam's refused call: %s", audit)
	}
}

// serve --profile with a name trunk.profiles lacks is refused at start,
// naming the profiles there are.
func TestServeUnknownProfile(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]server{"notes": notesServer()}, map[string]any{"profiles": map[string]any{"notes": map[string]any{"servers": []string{"notes"}}}})
	_, stderr, code := runCLI(t, 30*time.Second, "serve", "--profile", "nosuch", "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "--profile nosuch") || !strings.Contains(stderr, "it has: notes") {
		t.Errorf("serve --profile nosuch: exit %d, stderr %q", code, stderr)
	}
}

// serversListed are the servers whose tools cs is listed, by the middle
// part of each mcp__<server>__<tool> name, sorted.
func serversListed(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		if s := strings.Split(tool.Name, "__"); len(s) == 3 && !slices.Contains(out, s[1]) {
			out = append(out, s[1])
		}
	}
	slices.Sort(out)
	return out
}
