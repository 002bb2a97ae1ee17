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

	adminToken := iss.Token(t, "ada", trunkURL+"/mcp", groupClaims("admin"))
	supportToken := iss.Token(t, "sam", trunkURL+"/mcp", groupClaims("support"))
	admin := teamClient(t, ctx, trunk.url, adminToken)
	support := teamClient(t, ctx, trunk.url, supportToken)
	profileToken := iss.Token(t, "ada", trunkURL+"/mcp/p/weather", groupClaims("admin"))
	adminWeather := teamClient(t, ctx, trunk.url+"/p/weather", profileToken)

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

	// The status page, its events and /metrics show every server and every
	// caller's calls: they are the operators' (trunk.policy.operators).
	for _, path := range []string{"/", "/events", "/metrics"} {
		for _, c := range []struct {
			who, token string
			want       int
		}{{"admin", adminToken, http.StatusOK}, {"support", supportToken, http.StatusForbidden}, {"no one", "", http.StatusUnauthorized}} {
			if got := getStatus(t, ctx, "http://"+trunk.addr+path, c.token); got != c.want {
				t.Errorf("%s reading %s: HTTP %d, want %d", c.who, path, got, c.want)
			}
		}
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

// getStatus is the HTTP status of a GET of url with an access token
// (none when ""), read as soon as the answer's headers arrive (an event
// stream does not end).
func getStatus(t *testing.T, ctx context.Context, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// teamClient is a go-sdk host signed in with token, connected to
// endpoint until the test ends.
func teamClient(t *testing.T, ctx context.Context, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "team", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// groupClaims are the claims of a token whose groups are those given.
func groupClaims(groups ...string) map[string]any {
	return map[string]any{"scope": "mcp", "groups": groups}
}

// The trunk's own tools and its status resource name only the servers
// the caller's view shows: support, allowed weather and the trunk's own
// tools, never hears of notes (status, the status resource,
// wait_for_servers, list_resources' error), and a hidden server is
// unknown as a missing one is; admin, allowed everything, sees both.
func TestOwnToolsNameOnlyTheCallersServers(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	iss := testissuer.New(t)
	const resource = "http://trunk.test/mcp"
	cfg := writeConfig(t, map[string]server{"notes": notesServer(), "weather": weatherServer()}, waitingForAll(map[string]any{
		"http":          map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": resource, "scopes": []string{"mcp"}}},
		"resourceTools": true,
		"policy": map[string]any{"rules": []map[string]string{
			{"allow": `"admin" in claims.?groups.orValue([])`},
			{"allow": `"support" in claims.?groups.orValue([]) && server in ["weather", "trunk"]`},
		}},
	}))
	trunk := startHTTPTrunk(t, ctx, cfg)
	admin := teamClient(t, ctx, trunk.url, iss.Token(t, "ada", resource, groupClaims("admin")))
	support := teamClient(t, ctx, trunk.url, iss.Token(t, "sam", resource, groupClaims("support")))

	call := func(cs *mcp.ClientSession, tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__trunk__" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		out, _ := json.Marshal(res)
		return string(out)
	}
	if got := call(admin, "status", nil); !strings.Contains(got, `\"server\":\"notes\"`) || !strings.Contains(got, `\"server\":\"weather\"`) {
		t.Errorf("admin's status does not name both servers: %.2000s", got)
	}
	for name, got := range map[string]string{
		"status":                   call(support, "status", nil),
		"wait_for_servers":         call(support, "wait_for_servers", map[string]any{"timeoutSeconds": 1}),
		"list_resources of notes":  call(support, "list_resources", map[string]any{"server": "notes"}),
		"list_resources of nosuch": call(support, "list_resources", map[string]any{"server": "nosuch"}),
	} {
		if !strings.Contains(got, "weather") {
			t.Errorf("support's %s does not name weather: %.2000s", name, got)
		}
		if strings.Contains(strings.ReplaceAll(got, `no server \"notes\"`, ""), "notes") {
			t.Errorf("support's %s names notes, which support cannot see: %.2000s", name, got)
		}
	}
	hidden := call(support, "wait_for_servers", map[string]any{"servers": []string{"notes"}, "timeoutSeconds": 1})
	missing := call(support, "wait_for_servers", map[string]any{"servers": []string{"nosuch"}, "timeoutSeconds": 1})
	if strings.ReplaceAll(hidden, "notes", "NAME") != strings.ReplaceAll(missing, "nosuch", "NAME") {
		t.Errorf("wait_for_servers tells a hidden server from a missing one:\n%s\n%s", hidden, missing)
	}
	hidden = call(support, "list_resources", map[string]any{"server": "notes"})
	missing = call(support, "list_resources", map[string]any{"server": "nosuch"})
	if strings.ReplaceAll(hidden, "notes", "NAME") != strings.ReplaceAll(missing, "nosuch", "NAME") {
		t.Errorf("list_resources tells a hidden server from a missing one:\n%s\n%s", hidden, missing)
	}
	res, err := support.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptrunk://trunk/status"})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(res); strings.Contains(string(out), "notes") || !strings.Contains(string(out), "weather") {
		t.Errorf("support's status resource: %.2000s", out)
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
