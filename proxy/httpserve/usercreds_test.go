package httpserve

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Per-user credentials end to end, in this process: a trunk whose callers
// sign in at a test issuer (trunk.http.auth), in front of servers whose
// calls carry each caller's own credential, reached by go-sdk clients.

const (
	credsResource = "http://trunk.test/mcp"
	laptopToken   = "laptop-token-laptop-token-laptop"
	trunkSecret   = "trunk-client-secret-0123456789"
)

// credsTrunk serves cfgJSON (with ${ISSUER} and the secrets of env) over
// HTTP until the test ends, admitting iss's tokens for credsResource and
// the static laptopToken.
// Everything the trunk and the handler log, at debug, goes to log.
func credsTrunk(t *testing.T, iss *testissuer.Issuer, cfgJSON string, env map[string]string, dial upstream.Dialer, log *testkit.Buffer) string {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the catalog cache
	env["ISSUER"] = iss.URL
	cfg, err := config.Parse(strings.NewReader(`{"trunk": {"http": {"auth": {"issuer": "${ISSUER}", "resource": "`+credsResource+`"}}}, "mcpServers": `+cfgJSON+`}`),
		func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tr := proxy.New(cfg, &proxy.Options{Dial: dial, Logger: logger})
	tr.Share()
	tr.Start([]byte(`{}`), protocol.Revision2025)
	h := New(tr, Options{Auth: accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: credsResource}), Token: laptopToken, Logger: logger})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = tr.Close(ctx)
	})
	return srv.URL + DefaultPath
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs opens a go-sdk session with token.
func connectAs(t *testing.T, ctx context.Context, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callText calls a tool and returns its first text, or the error.
func callText(ctx context.Context, cs *mcp.ClientSession, tool string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", nil
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil {
		return "", nil
	}
	return text.Text, nil
}

func TestPerUserTokenExchange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iss := testissuer.New(t)
	iss.AddClient("trunk", trunkSecret)
	who := testkit.StartWhoami(t, iss.URL, "https://whoami.test")
	nope := testkit.StartWhoami(t, iss.URL, "https://refused.test")
	iss.Refuse("https://refused.test", "invalid_target")
	log := &testkit.Buffer{}
	creds := func(aud string) string {
		return `"credentials": {"mode": "exchange", "audience": "` + aud + `", "clientId": "trunk", "clientSecret": "${TRUNK_SECRET}"}`
	}
	url := credsTrunk(t, iss, `{
		"who": {"url": "`+who.URL+`", `+creds("https://whoami.test")+`},
		"nope": {"url": "`+nope.URL+`", `+creds("https://refused.test")+`}}`, map[string]string{"TRUNK_SECRET": trunkSecret}, nil, log)

	tokens := map[string]string{}
	for _, sub := range []string{"alice", "bob"} {
		tokens[sub] = iss.Token(t, sub, credsResource, nil)
	}
	// Two users, alice with two sessions: each sees itself at the server,
	// with the server's audience.
	sessions := []struct {
		sub string
		cs  *mcp.ClientSession
	}{{"alice", connectAs(t, ctx, url, tokens["alice"])}, {"bob", connectAs(t, ctx, url, tokens["bob"])}, {"alice", connectAs(t, ctx, url, tokens["alice"])}}
	for i, s := range sessions {
		text, err := callText(ctx, s.cs, "mcp__who__whoami")
		if err != nil {
			t.Fatalf("session %d (%s): %v", i, s.sub, err)
		}
		sub, aud, err := testkit.WhoamiAnswer(text)
		if err != nil || sub != s.sub || !slices.Equal(aud, []string{"https://whoami.test"}) {
			t.Errorf("session %d (%s): the server saw sub %q aud %q (%v); want its own sub and the server's audience", i, s.sub, sub, aud, err)
		}
	}
	exchanges := map[string]int{}
	for _, is := range iss.Issued() {
		if is.Grant == "exchange" && is.Audience == "https://whoami.test" {
			exchanges[is.Subject]++
		}
	}
	if exchanges["alice"] != 1 || exchanges["bob"] != 1 {
		t.Errorf("exchanges per subject %v; want one each (alice's sessions share her instance and token)", exchanges)
	}

	// Refused at the issuer: the error names the server and the code,
	// never a token; the other server still answers.
	_, err := callText(ctx, sessions[0].cs, "mcp__nope__whoami")
	if err == nil || !strings.Contains(err.Error(), `server "nope"`) || !strings.Contains(err.Error(), "invalid_target") {
		t.Errorf("a refused exchange: %v; want an error naming the server and the issuer's code", err)
	}
	t.Logf("the refusal: %v", err)
	if err != nil && (strings.Contains(err.Error(), tokens["alice"]) || strings.Contains(err.Error(), trunkSecret)) {
		t.Error("the error quotes a token or the client secret")
	}
	if _, err := callText(ctx, sessions[0].cs, "mcp__who__whoami"); err != nil {
		t.Errorf("after another server's refusal: %v", err)
	}
	// Once the issuer agrees, the next call starts the instance afresh.
	iss.Refuse("https://refused.test", "")
	if text, err := callText(ctx, sessions[0].cs, "mcp__nope__whoami"); err != nil || !strings.Contains(text, `"alice"`) {
		t.Errorf("after the issuer agreed: %q, %v", text, err)
	}

	// A caller without an identity (the static token) is refused.
	laptop := connectAs(t, ctx, url, laptopToken)
	if _, err := callText(ctx, laptop, "mcp__who__whoami"); err == nil || !strings.Contains(err.Error(), `server "who"`) || !strings.Contains(err.Error(), "needs a signed-in caller") {
		t.Errorf("a caller without identity: %v", err)
	}

	// The log names servers and subjects, never a token or the secret.
	secrets := []string{trunkSecret, tokens["alice"], tokens["bob"]}
	for _, is := range iss.Issued() {
		secrets = append(secrets, is.Token)
	}
	for _, tok := range secrets {
		if strings.Contains(log.String(), tok) {
			t.Errorf("the log has a token or secret:\n%s", log.String())
		}
	}
	if !strings.Contains(log.String(), `subject=alice`) {
		t.Errorf("the log never names the subject alice:\n%s", log.String())
	}

	// The servers never got a token meant for the trunk: only their own
	// audience (the trunk's own client token for listing included).
	for name, w := range map[string]*testkit.Whoami{"who": who, "nope": nope} {
		if w.SawAudience(credsResource) {
			t.Errorf("%s was sent a token whose audience is the trunk", name)
		}
		for _, s := range w.Seen() {
			if !s.Accepted {
				t.Errorf("%s refused a token (sub %q, aud %q)", name, s.Subject, s.Audience)
			}
		}
	}
}

// dbServers are in-memory stdio servers whose tool "token" answers the
// DB_TOKEN its instance was started with, one per dial.
type dbServers struct {
	mu    sync.Mutex
	dials map[string]int // DB_TOKEN -> instances started with it
}

func (d *dbServers) dial(spec config.Spec, h jsonrpc.Handler) (upstream.Transport, error) {
	token := spec.Env["DB_TOKEN"]
	d.mu.Lock()
	d.dials[token]++
	d.mu.Unlock()
	s := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("token", "the instance's DB_TOKEN")},
		Handle: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return memserver.Text(token), nil
		}}
	return s.Dial(h), nil
}

func TestPerUserStaticSecrets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iss := testissuer.New(t)
	db := &dbServers{dials: map[string]int{}}
	url := credsTrunk(t, iss, `{"db": {"command": "db-server", "protocolVersion": "2025-11-25", "env": {"DB_TOKEN": "listing-only"},
		"credentials": {"mode": "static", "users": {"alice": {"env": {"DB_TOKEN": "${ALICE_DB}"}}, "bob": {"env": {"DB_TOKEN": "${BOB_DB}"}}}}}}`,
		map[string]string{"ALICE_DB": "alice-secret", "BOB_DB": "bob-secret"}, db.dial, &testkit.Buffer{})
	for _, tc := range []struct{ sub, want string }{{"alice", "alice-secret"}, {"bob", "bob-secret"}, {"alice", "alice-secret"}} {
		cs := connectAs(t, ctx, url, iss.Token(t, tc.sub, credsResource, nil))
		got, err := callText(ctx, cs, "mcp__db__token")
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.sub, got, err, tc.want)
		}
	}
	// A stateless (2026-07-28) request of alice's goes to her instance too.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__db__token","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"stateless","version":"1"}}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "mcp__db__token",
		"Authorization": "Bearer " + iss.Token(t, "alice", credsResource, nil)} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.Contains(string(answer), "alice-secret") {
		t.Errorf("alice's stateless call: HTTP %d %s; want her instance's answer", resp.StatusCode, answer)
	}

	carol := connectAs(t, ctx, url, iss.Token(t, "carol", credsResource, nil))
	if _, err := callText(ctx, carol, "mcp__db__token"); err == nil || !strings.Contains(err.Error(), `server "db" has no credentials for "carol"`) {
		t.Errorf("carol, signed in without credentials: %v", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	want := map[string]int{"listing-only": 1, "alice-secret": 1, "bob-secret": 1}
	// alice's two sessions and her stateless request share one instance.
	if len(db.dials) != len(want) || db.dials["listing-only"] != 1 || db.dials["alice-secret"] != 1 || db.dials["bob-secret"] != 1 {
		t.Errorf("instances started %v; want %v: the shared one lists, one per user, alice's two sessions share hers", db.dials, want)
	}
}
