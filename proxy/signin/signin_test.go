package signin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// rig is a Manager serving its routes on loopback, configured with one
// server in oauth mode (a whoami whose callers sign in at iss).
type rig struct {
	m   *Manager
	iss *testissuer.Issuer
	who *testkit.Whoami
	clk *testkit.Clock
	log *testkit.Buffer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{iss: testissuer.New(t), clk: testkit.NewClock(time.Now())}
	r.who = testkit.StartWhoamiSignIn(t, r.iss.URL)
	return r.replica(t, nil)
}

// replica is another Manager (a restarted trunk, or a second replica) for
// r's issuer and server, keeping its grants in store (memory when nil).
func (r *rig) replica(t *testing.T, store *statestore.Store) *rig {
	t.Helper()
	r = &rig{iss: r.iss, who: r.who, clk: r.clk, log: &testkit.Buffer{}}
	r.m = New(Options{Now: r.clk.Now, Store: store, Logger: slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	hs := httptest.NewUnstartedServer(r.m)
	base := "http://" + hs.Listener.Addr().String()
	hs.Start()
	t.Cleanup(hs.Close)
	cfg, err := config.Parse(strings.NewReader(`{"trunk": {"http": {"auth": {"issuer": "`+r.iss.URL+`", "resource": "`+base+`/mcp"}}},
		"mcpServers": {"who": {"url": "`+r.who.URL+`", "credentials": {"mode": "oauth"}}}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	r.m.Configure(cfg)
	return r
}

// elicit calls Require for subject as a host that opens no URLs, and
// returns the URL of the URLElicitationRequiredError it must get.
func (r *rig) elicit(t *testing.T, subject string) string {
	t.Helper()
	err := r.m.Require(context.Background(), Caller{Subject: subject}, "who")
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != CodeURLElicitationRequired {
		t.Fatalf("Require for %s: %v; want a URLElicitationRequiredError", subject, err)
	}
	var data struct {
		Elicitations []struct{ Mode, URL, ElicitationID, Message string }
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" || data.Elicitations[0].ElicitationID == "" {
		t.Fatalf("its data %s (%v); want one URL elicitation with an id", e.Data, err)
	}
	u := data.Elicitations[0].URL
	if !strings.Contains(u, connectPath) || !strings.Contains(e.Message, `server "who"`) || !strings.Contains(e.Message, u) {
		t.Fatalf("message %q, url %q: want the server and the connect URL named", e.Message, u)
	}
	return u
}

// toCallback follows the connect link with browser up to the
// authorization server's redirect, and returns the callback URL it names
// (code and state), not yet visited.
func toCallback(t *testing.T, browser *http.Client, connect string) string {
	t.Helper()
	step := *browser
	step.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	next := connect
	for range 2 { // the trunk's redirect, then the authorization server's
		resp, err := step.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("GET %s: %d, want a redirect", next, resp.StatusCode)
		}
		next = resp.Header.Get("Location")
	}
	if !strings.Contains(next, callbackPath) {
		t.Fatalf("the authorization server redirected to %s, not the callback", next)
	}
	return next
}

func subjectOf(t *testing.T, bearer string) (string, []string) {
	t.Helper()
	tok, err := jwt.ParseSigned(strings.TrimPrefix(bearer, "Bearer "), []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil {
		t.Fatal(err)
	}
	return c.Subject, c.Audience
}

func grants(iss *testissuer.Issuer, grant, sub string) int {
	n := 0
	for _, is := range iss.Issued() {
		if is.Grant == grant && is.Subject == sub {
			n++
		}
	}
	return n
}

func TestSignInKeepsEachSubjectsOwnTokenAndRefreshesIt(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for _, sub := range []string{"alice", "bob"} {
		if _, err := r.m.Authorization(ctx, sub, "who", ""); !errors.As(err, new(*NeedSignInError)) {
			t.Fatalf("%s before signing in: %v; want NeedSignInError", sub, err)
		}
		if status, page := testissuer.Visit(t, r.iss.Browser(t, sub), r.elicit(t, sub)); status != http.StatusOK || !strings.Contains(page, "Signed in to who") {
			t.Fatalf("%s's sign-in: %d %s", sub, status, page)
		}
		v, err := r.m.Authorization(ctx, sub, "who", "")
		if err != nil {
			t.Fatal(err)
		}
		if got, aud := subjectOf(t, v); got != sub || len(aud) != 1 || aud[0] != r.who.URL {
			t.Errorf("%s's token: sub %q aud %q; want %s's, for the server", sub, got, aud, sub)
		}
		if err := r.m.Require(ctx, Caller{Subject: sub}, "who"); err != nil {
			t.Errorf("%s signed in, Require: %v", sub, err)
		}
	}
	if r.m.holding() != 2 {
		t.Errorf("%d subjects hold tokens, want 2", r.m.holding())
	}

	// Near its expiry (an hour), the token is refreshed.
	first, _ := r.m.Authorization(ctx, "alice", "who", "")
	r.clk.Add(time.Hour - 10*time.Second)
	second, err := r.m.Authorization(ctx, "alice", "who", "")
	if err != nil || second == first || grants(r.iss, "refresh_token", "alice") != 1 {
		t.Errorf("near expiry: changed %v, %v, %d refreshes; want one refresh and a new token", second != first, err, grants(r.iss, "refresh_token", "alice"))
	}
	// A token the server refuses (401) is replaced by a refresh.
	third, err := r.m.Authorization(ctx, "alice", "who", second)
	if err != nil || third == second || grants(r.iss, "refresh_token", "alice") != 2 {
		t.Errorf("refused: changed %v, %v; want a refreshed token", third != second, err)
	}
	// Refused, and the grant revoked: the caller must sign in again.
	r.iss.RevokeRefresh("alice")
	if _, err := r.m.Authorization(ctx, "alice", "who", third); !errors.As(err, new(*NeedSignInError)) {
		t.Errorf("revoked: %v; want NeedSignInError", err)
	}
	r.elicit(t, "alice")
	if v, err := r.m.Authorization(ctx, "bob", "who", ""); err != nil || v == "" {
		t.Errorf("bob after alice's revocation: %v", err)
	}

	// The log names subjects and servers, never a token.
	for _, is := range r.iss.Issued() {
		if strings.Contains(r.log.String(), is.Token) {
			t.Fatalf("the log has a token:\n%s", r.log.String())
		}
	}
	if !strings.Contains(r.log.String(), "subject=alice") {
		t.Errorf("the log never names alice:\n%s", r.log.String())
	}
}

func TestSignInStateIsSingleUseBoundAndExpiring(t *testing.T) {
	r := newRig(t)
	alice, bob := r.iss.Browser(t, "alice"), r.iss.Browser(t, "bob")

	// Replayed: a callback is taken once.
	cb := toCallback(t, alice, r.elicit(t, "alice"))
	if status, page := testissuer.Visit(t, alice, cb); status != http.StatusOK {
		t.Fatalf("alice's callback: %d %s", status, page)
	}
	if status, _ := testissuer.Visit(t, alice, cb); status != http.StatusBadRequest {
		t.Errorf("the callback replayed: %d, want 400", status)
	}

	// Another subject's state, in bob's browser: refused, and it is no
	// one's token.
	link := r.elicit(t, "carol")
	cb = toCallback(t, r.iss.Browser(t, "carol"), link)
	if status, page := testissuer.Visit(t, bob, cb); status != http.StatusForbidden || !strings.Contains(page, "another browser") {
		t.Errorf("carol's callback in bob's browser: %d %s; want 403", status, page)
	}
	if _, err := r.m.Authorization(context.Background(), "carol", "who", ""); err == nil {
		t.Error("carol got a token from a callback her browser did not make")
	}
	if _, err := r.m.Authorization(context.Background(), "bob", "who", ""); err == nil {
		t.Error("bob got a token from carol's sign-in")
	}

	// A connect link opens once.
	link = r.elicit(t, "dave")
	dave := r.iss.Browser(t, "dave")
	toCallback(t, dave, link)
	if status, _ := testissuer.Visit(t, dave, link); status != http.StatusNotFound {
		t.Errorf("the connect link opened twice: %d, want 404", status)
	}

	// Expired: after the flow's time, neither the link nor the callback.
	link = r.elicit(t, "erin")
	erin := r.iss.Browser(t, "erin")
	cb = toCallback(t, erin, r.elicit(t, "erin"))
	r.clk.Add(defaultFlowTTL + time.Second)
	if status, _ := testissuer.Visit(t, erin, link); status != http.StatusGone {
		t.Errorf("an expired link: %d, want 410", status)
	}
	if status, page := testissuer.Visit(t, erin, cb); status != http.StatusBadRequest || !strings.Contains(page, "expired") {
		t.Errorf("an expired callback: %d %s; want 400 saying expired", status, page)
	}
	if _, err := r.m.Authorization(context.Background(), "erin", "who", ""); err == nil {
		t.Error("erin got a token from an expired sign-in")
	}
}

func TestRequireAsksAHostThatOpensURLs(t *testing.T) {
	r := newRig(t)
	var asked, told json.RawMessage
	caller := Caller{Subject: "alice", Session: "s1", Elicitation: json.RawMessage(`{"form": {}, "url": {}}`),
		Ask: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			var p struct{ Mode, URL string }
			if err := json.Unmarshal(params, &p); err != nil || method != "elicitation/create" || p.Mode != "url" {
				return nil, errors.New("not a URL elicitation")
			}
			asked = params
			if status, page := testissuer.Visit(t, r.iss.Browser(t, "alice"), p.URL); status != http.StatusOK {
				return nil, errors.New(page)
			}
			return json.RawMessage(`{"action": "accept"}`), nil
		},
		Notify: func(method string, params json.RawMessage) error {
			if method == "notifications/elicitation/complete" {
				told = params
			}
			return nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.m.Require(ctx, caller, "who"); err != nil {
		t.Fatalf("Require: %v", err)
	}
	var a, n struct {
		ElicitationID string `json:"elicitationId"`
	}
	_ = json.Unmarshal(asked, &a)
	_ = json.Unmarshal(told, &n)
	if a.ElicitationID == "" || n.ElicitationID != a.ElicitationID {
		t.Errorf("asked %s, told %s; want the completion to name the elicitation", asked, told)
	}
	if v, err := r.m.Authorization(ctx, "alice", "who", ""); err != nil || v == "" {
		t.Errorf("after the sign-in: %v", err)
	}

	// Declined: the call fails saying so. A stateless request, which
	// cannot be asked mid-call, gets the error.
	bob := caller
	bob.Subject = "bob"
	bob.Ask = func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action": "decline"}`), nil
	}
	if err := r.m.Require(ctx, bob, "who"); err == nil || !strings.Contains(err.Error(), "not accepted (decline)") {
		t.Errorf("declined: %v", err)
	}
	bob.Stateless = true
	var e *jsonrpc.Error
	if err := r.m.Require(ctx, bob, "who"); !errors.As(err, &e) || e.Code != CodeURLElicitationRequired {
		t.Errorf("stateless: %v; want a URLElicitationRequiredError", err)
	}
}
