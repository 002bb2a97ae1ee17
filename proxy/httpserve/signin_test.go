package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/proxy/signin"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// Per-user OAuth sign-in end to end, in this process: callers of a trunk
// (signed in at iss, trunk.http.auth) each sign in to a server whose own
// authorization server is iss too, through the URL elicitation the trunk
// answers their first call with; the trunk lists the server's tools with
// its own sign-in (mcptrunk auth's, done here first).

// signInTrunk serves a trunk with the server "who" in credentials mode
// "oauth" on a loopback listener whose URL is trunk.http.auth.resource,
// and returns its MCP endpoint.
func signInTrunk(t *testing.T, iss *testissuer.Issuer, who *testkit.Whoami, log *testkit.Buffer) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(oauth.TokenDirEnv, t.TempDir())
	// The trunk's own sign-in, for the instance that lists the tools.
	admin := iss.Browser(t, "trunk-admin")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := oauth.Authorize(ctx, oauth.Server{Name: "who", URL: who.URL}, oauth.AuthorizeOptions{Prompt: func(u string) {
		if status, page := testissuer.Visit(t, admin, u); status != http.StatusOK {
			t.Errorf("the trunk's own sign-in: %d %s", status, page)
		}
	}}); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + DefaultPath
	cfg, err := config.Parse(strings.NewReader(`{"trunk": {"http": {"auth": {"issuer": "`+iss.URL+`", "resource": "`+resource+`"}}},
		"mcpServers": {"who": {"url": "`+who.URL+`", "credentials": {"mode": "oauth"}}}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tr := proxy.New(cfg, &proxy.Options{Logger: logger})
	tr.Share()
	tr.Start([]byte(`{}`), protocol.Revision2025)
	h := New(tr, Options{Auth: accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: resource}), Token: laptopToken, Logger: logger})
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = tr.Close(ctx)
	})
	return resource
}

// urlHost is a host that opens URLs: its browser completes each URL
// elicitation, and it records the completions the trunk announces.
type urlHost struct {
	mu       sync.Mutex
	asked    []string    // elicitation ids
	complete chan string // completed elicitation ids
	cs       *mcp.ClientSession
}

func connectURLHost(t *testing.T, ctx context.Context, url, token string, browser *http.Client) *urlHost {
	t.Helper()
	uh := &urlHost{complete: make(chan string, 4)}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			uh.mu.Lock()
			uh.asked = append(uh.asked, req.Params.ElicitationID)
			uh.mu.Unlock()
			if req.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			resp, err := browser.Get(req.Params.URL)
			if err != nil {
				return nil, err
			}
			_ = resp.Body.Close()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			uh.complete <- req.Params.ElicitationID
		},
	})
	// At 2025-11-25: a session the trunk can ask mid-call.
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol.Revision2025})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	uh.cs = cs
	return uh
}

// elicitationOf reads the URL of the URLElicitationRequiredError err must
// be.
func elicitationOf(t *testing.T, err error) string {
	t.Helper()
	var e *sdkrpc.Error
	if !errors.As(err, &e) || e.Code != signin.CodeURLElicitationRequired {
		t.Fatalf("%v; want a URLElicitationRequiredError", err)
	}
	var data struct {
		Elicitations []mcp.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" {
		t.Fatalf("its data %s (%v); want one URL elicitation", e.Data, err)
	}
	return data.Elicitations[0].URL
}

// whoamiSub calls whoami and returns the subject the server saw.
func whoamiSub(t *testing.T, ctx context.Context, cs *mcp.ClientSession) string {
	t.Helper()
	text, err := callText(ctx, cs, "mcp__who__whoami")
	if err != nil {
		t.Fatal(err)
	}
	sub, _, err := testkit.WhoamiAnswer(text)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return sub
}

func TestPerUserOAuthSignIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iss := testissuer.New(t)
	who := testkit.StartWhoamiSignIn(t, iss.URL)
	log := &testkit.Buffer{}
	url := signInTrunk(t, iss, who, log)
	tokens := map[string]string{"alice": iss.Token(t, "alice", url, nil), "bob": iss.Token(t, "bob", url, nil)}

	// Alice's host opens URLs: her first call asks it to, waits for her
	// sign-in, and goes on; the host hears that the elicitation is
	// complete. Her next call asks nothing.
	alice := connectURLHost(t, ctx, url, tokens["alice"], iss.Browser(t, "alice"))
	if sub := whoamiSub(t, ctx, alice.cs); sub != "alice" {
		t.Errorf("alice's call: the server saw %q", sub)
	}
	select {
	case id := <-alice.complete:
		alice.mu.Lock()
		if len(alice.asked) != 1 || alice.asked[0] != id {
			t.Errorf("completed %q, asked %v", id, alice.asked)
		}
		alice.mu.Unlock()
	case <-ctx.Done():
		t.Fatal("no notifications/elicitation/complete")
	}
	if sub := whoamiSub(t, ctx, alice.cs); sub != "alice" {
		t.Errorf("alice's second call: the server saw %q", sub)
	}

	// Bob's host (go-sdk's default, the stateless revision) cannot be
	// asked mid-call: his call gets the error carrying
	// the elicitation; once signed in, his retry goes through as him.
	bob := connectAs(t, ctx, url, tokens["bob"])
	_, err := callText(ctx, bob, "mcp__who__whoami")
	link := elicitationOf(t, err)
	if !strings.Contains(err.Error(), `server "who"`) {
		t.Errorf("the error %q does not name the server", err)
	}
	bobsBrowser := iss.Browser(t, "bob")
	if status, page := testissuer.Visit(t, bobsBrowser, link); status != http.StatusOK || !strings.Contains(page, "return to your MCP host") {
		t.Fatalf("bob's sign-in: %d %s", status, page)
	}
	if sub := whoamiSub(t, ctx, bob); sub != "bob" {
		t.Errorf("bob's retry: the server saw %q", sub)
	}
	alice.mu.Lock()
	if len(alice.asked) != 1 {
		t.Errorf("alice was asked %d times; want once", len(alice.asked))
	}
	alice.mu.Unlock()

	// The server revokes bob's grant: the call that meets the 401 fails
	// (the refresh is refused too), and the next one asks him to sign in
	// again.
	who.Revoke("bob")
	iss.RevokeRefresh("bob")
	if _, err := callText(ctx, bob, "mcp__who__whoami"); err == nil {
		t.Error("a call with a revoked grant went through")
	}
	_, err = callText(ctx, bob, "mcp__who__whoami")
	elicitationOf(t, err)

	// A caller without an identity gets the error naming the server.
	laptop := connectAs(t, ctx, url, laptopToken)
	if _, err := callText(ctx, laptop, "mcp__who__whoami"); err == nil || !strings.Contains(err.Error(), `server "who"`) || !strings.Contains(err.Error(), "needs a signed-in caller") {
		t.Errorf("a caller without identity: %v", err)
	}

	// The server saw the trunk's own token (listing) and each caller's,
	// never one meant for the trunk; the log has no token.
	var subs []string
	for _, s := range who.Seen() {
		if s.Accepted && !slices.Contains(subs, s.Subject) {
			subs = append(subs, s.Subject)
		}
	}
	slices.Sort(subs)
	if !slices.Equal(subs, []string{"alice", "bob", "trunk-admin"}) || who.SawAudience(url) {
		t.Errorf("the server accepted tokens of %v (trunk's audience seen: %v); want alice, bob and the trunk's own", subs, who.SawAudience(url))
	}
	for _, is := range iss.Issued() {
		if strings.Contains(log.String(), is.Token) {
			t.Fatalf("the log has a token:\n%s", log.String())
		}
	}
}

// go-sdk's own OAuth client as the host: it signs in to the trunk (the
// authorization code flow at the trunk's issuer, found from the trunk's
// 401 and metadata), and then, through the trunk's URL elicitation, to
// the server; the server sees the user the host signed in as.
func TestGoSDKOAuthHostSignsInToTheTrunkAndTheServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iss := testissuer.New(t)
	who := testkit.StartWhoamiSignIn(t, iss.URL)
	url := signInTrunk(t, iss, who, &testkit.Buffer{})
	browser := iss.Browser(t, "carol")

	const redirect = "http://127.0.0.1:1/host-callback" // never visited: the fetcher reads the redirect
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"}}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			step := *browser
			step.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			resp, err := step.Get(args.URL)
			if err != nil {
				return nil, err
			}
			_ = resp.Body.Close()
			back, err := neturl.Parse(resp.Header.Get("Location"))
			if err != nil || !strings.HasPrefix(back.String(), redirect) {
				return nil, fmt.Errorf("the issuer answered %d, redirecting to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			q := back.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	host := mcp.NewClient(&mcp.Implementation{Name: "sdk-oauth-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if status, page := testissuer.Visit(t, browser, req.Params.URL); status != http.StatusOK {
				return nil, errors.New(page)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := host.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: handler}, &mcp.ClientSessionOptions{ProtocolVersion: protocol.Revision2025})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if sub := whoamiSub(t, ctx, cs); sub != "carol" {
		t.Errorf("the server saw %q; want carol, whom the host signed in as", sub)
	}
	if who.SawAudience(url) {
		t.Error("the server was sent a token meant for the trunk")
	}
}
