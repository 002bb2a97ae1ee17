package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
)

// bearer adds an access token to every request of the go-sdk client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// serve --http with trunk.http.auth: a host with an access token of the
// configured issuer (a test issuer: discovery and JWKS over httptest,
// tokens signed with go-jose) uses the trunk; a token for another
// audience gets 401 with a challenge that points at the metadata. The
// audit line of a call names its caller.
func TestHTTPAccessTokens(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	iss := testissuer.New(t)
	const resource = "http://trunk.test/mcp"
	cfg := writeConfig(t, map[string]server{"notes": notesServer()},
		map[string]any{"http": map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": resource, "scopes": []string{"mcp"}}},
			"audit": map[string]any{"file": "audit.jsonl"}})
	trunk := startHTTPTrunk(t, ctx, cfg)

	token := iss.Token(t, "ann", resource, map[string]any{"scope": "mcp"})
	client := mcp.NewClient(&mcp.Implementation{Name: "ann", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: trunk.url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__notes__echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}

	other := iss.Token(t, "bob", "http://elsewhere.test/mcp", map[string]any{"scope": "mcp"})
	reply, err := postMCP(ctx, trunk.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, map[string]string{"Authorization": "Bearer " + other})
	if err != nil {
		t.Fatal(err)
	}
	if c := reply.header.Get("WWW-Authenticate"); reply.status != http.StatusUnauthorized ||
		!strings.Contains(c, `resource_metadata="http://trunk.test/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("a token for another audience: HTTP %d, WWW-Authenticate %q", reply.status, c)
	}
	// The call's audit line names its caller; it is written after the
	// answer, so wait for it.
	var audit []byte
	if !waitFor(ctx, 20*time.Second, func() bool {
		audit, _ = os.ReadFile(filepath.Join(filepath.Dir(cfg), "audit.jsonl"))
		return strings.Contains(string(audit), `"subject":"ann"`)
	}) || strings.Contains(string(audit), token) {
		t.Errorf("audit log: %s", audit)
	}
	if strings.Contains(trunk.stderr.String(), other) || strings.Contains(trunk.stderr.String(), token) {
		t.Error("a token reached the log")
	}
}
