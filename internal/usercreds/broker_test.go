package usercreds

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

const trunkAud = "https://trunk.example.com/mcp"

func exchangeSpec(iss *testissuer.Issuer, name, aud string) config.Spec {
	return config.Spec{Name: name, Type: config.TransportHTTP, URL: "https://" + name + ".example.com/mcp", Credentials: config.Credentials{
		Mode: config.CredentialsExchange, Issuer: iss.URL, Audience: aud, ClientID: "trunk", ClientSecret: "s3cret-of-the-trunk"}}
}

// claimsOf reads a bearer value's token without checking it.
func claimsOf(t *testing.T, bearer string) jwt.Claims {
	t.Helper()
	raw, ok := strings.CutPrefix(bearer, "Bearer ")
	if !ok {
		t.Fatalf("not a bearer value: %.12q...", bearer)
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExchangeGivesTheServerItsOwnTokenForTheSameSubject(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	clk := testkit.NewClock(time.Now())
	b := New(Options{Now: clk.Now})
	b.Configure([]config.Spec{exchangeSpec(iss, "gh", "https://gh.example.com"), {Name: "plain", Command: "p"}})
	inbound := map[string]string{"alice": iss.Token(t, "alice", trunkAud, nil), "bob": iss.Token(t, "bob", trunkAud, nil)}
	ctx := context.Background()
	for _, sub := range []string{"alice", "bob"} {
		v, err := b.Authorization(ctx, sub, "gh", "", func() string { return inbound[sub] })
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		c := claimsOf(t, v)
		if c.Subject != sub || len(c.Audience) != 1 || c.Audience[0] != "https://gh.example.com" {
			t.Errorf("%s's token: sub %q aud %q; want sub %q aud the server's", sub, c.Subject, c.Audience, sub)
		}
		if strings.Contains(v, inbound[sub]) {
			t.Errorf("%s's inbound token was handed on", sub)
		}
	}
	// Cached: a second request exchanges nothing.
	if _, err := b.Authorization(ctx, "alice", "gh", "", func() string { return inbound["alice"] }); err != nil {
		t.Fatal(err)
	}
	if n := len(iss.Issued()); n != 2 {
		t.Errorf("%d tokens minted, want 2 (one per subject)", n)
	}
	// Shortly before expiry (an hour) it is exchanged again.
	clk.Add(time.Hour - 30*time.Second)
	if _, err := b.Authorization(ctx, "alice", "gh", "", func() string { return inbound["alice"] }); err != nil {
		t.Fatal(err)
	}
	if n := len(iss.Issued()); n != 3 {
		t.Errorf("%d tokens minted after the token neared expiry, want 3", n)
	}
	// A server without per-user credentials has no Authorization.
	if v, err := b.Authorization(ctx, "alice", "plain", "", func() string { return inbound["alice"] }); err == nil || v != "" {
		t.Errorf("plain: %q, %v; want an error", v, err)
	}
	b.Forget("alice")
	if b.Holding() != 1 {
		t.Errorf("%d subjects hold tokens after alice was forgotten, want 1", b.Holding())
	}
}

// A value the server refused (a 401) is dropped and exchanged again; a
// refused value that is not the one held (another's, or an older one)
// leaves the held token alone.
func TestExchangeDropsTheRefusedToken(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	b := New(Options{})
	b.Configure([]config.Spec{exchangeSpec(iss, "gh", "https://gh.example.com")})
	inbound := func() string { return iss.Token(t, "alice", trunkAud, nil) }
	ctx := context.Background()
	first, err := b.Authorization(ctx, "alice", "gh", "", inbound)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := b.Authorization(ctx, "alice", "gh", "Bearer not-the-one-held", inbound); err != nil || again != first || len(iss.Issued()) != 1 {
		t.Errorf("after another value was refused: %d tokens minted (%v), want the held one kept", len(iss.Issued()), err)
	}
	if _, err := b.Authorization(ctx, "alice", "gh", first, inbound); err != nil {
		t.Fatal(err)
	}
	if n := len(iss.Issued()); n != 2 {
		t.Errorf("%d tokens minted, want 2 (the first, and one in place of the refused)", n)
	}
}

func TestExchangeRefusals(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	iss.Refuse("https://no.example.com", "invalid_target")
	wrong := exchangeSpec(iss, "wrong", "https://gh.example.com")
	wrong.Credentials.ClientSecret = "not-the-secret"
	b := New(Options{})
	b.Configure([]config.Spec{exchangeSpec(iss, "gh", "https://gh.example.com"), exchangeSpec(iss, "no", "https://no.example.com"), wrong})
	good := iss.Token(t, "alice", trunkAud, nil)
	expired := testissuer.Sign(t, iss.CurrentSigner(), iss.Claims("alice", trunkAud, -time.Minute), nil)
	for _, tt := range []struct{ server, inbound, code string }{
		{"no", good, "invalid_target"},
		{"wrong", good, "invalid_client"},
		{"gh", expired, "invalid_grant"},
	} {
		_, err := b.Authorization(context.Background(), "alice", tt.server, "", func() string { return tt.inbound })
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Server != tt.server {
			t.Errorf("%s: %v; want the issuer's %s naming the server", tt.server, err, tt.code)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tt.code) || strings.Contains(msg, tt.inbound) || strings.Contains(msg, "s3cret") {
			t.Errorf("%s: message %q must name the code and no token or secret", tt.server, msg)
		}
	}
	if _, err := b.Authorization(context.Background(), "alice", "gh", "", func() string { return "" }); err == nil || !strings.Contains(err.Error(), "needs a signed-in caller") {
		t.Errorf("without an inbound token: %v", err)
	}
}

func TestCatalogInstanceUsesTheTrunksOwnToken(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "s3cret-of-the-trunk")
	b := New(Options{})
	b.Configure([]config.Spec{exchangeSpec(iss, "gh", "https://gh.example.com")})
	v, err := b.Catalog(context.Background(), "gh", "")
	if err != nil {
		t.Fatal(err)
	}
	if c := claimsOf(t, v); c.Subject != "trunk" || c.Audience[0] != "https://gh.example.com" {
		t.Errorf("catalog token: sub %q aud %q; want the trunk's client for the server", c.Subject, c.Audience)
	}
	if got := iss.Issued(); len(got) != 1 || got[0].Grant != "client_credentials" {
		t.Errorf("issued %+v, want one client credentials token", got)
	}
}

func TestStaticSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.json")
	if err := os.WriteFile(file, []byte(`{"alice": {"env": {"DB_TOKEN": "alice-db"}}, "bob": {"headers": {"X-Key": "bob-key"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b := New(Options{})
	stdio := config.Spec{Name: "db", Type: config.TransportStdio, Command: "db", Env: map[string]string{"MODE": "ro", "DB_TOKEN": "shared"},
		Credentials: config.Credentials{Mode: config.CredentialsStatic, File: file}}
	remote := config.Spec{Name: "api", Type: config.TransportHTTP, URL: "https://api.example.com",
		Credentials: config.Credentials{Mode: config.CredentialsStatic, Users: map[string]config.UserSecrets{"bob": {Headers: map[string]string{"X-Key": "bob-key"}}}}}
	b.Configure([]config.Spec{stdio, remote})
	got, err := b.ForSubject(stdio, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got.Env["DB_TOKEN"] != "alice-db" || got.Env["MODE"] != "ro" || stdio.Env["DB_TOKEN"] != "shared" {
		t.Errorf("alice's env %v (entry's now %v); want hers over the entry's, the entry unchanged", got.Env, stdio.Env)
	}
	if got, err := b.ForSubject(remote, "bob"); err != nil || got.Headers["X-Key"] != "bob-key" {
		t.Errorf("bob's headers %v, %v", got.Headers, err)
	}
	if _, err := b.ForSubject(stdio, "carol"); err == nil || !strings.Contains(err.Error(), `server "db" has no credentials for "carol"`) {
		t.Errorf("carol: %v", err)
	}
	if err := os.WriteFile(file, []byte(`{"alice": "alice-db"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ForSubject(stdio, "alice"); err == nil || strings.Contains(err.Error(), "alice-db") {
		t.Errorf("a broken file: %v; want an error that quotes nothing of it", err)
	}
	if v, err := b.Authorization(context.Background(), "alice", "db", "", func() string { return "x" }); v != "" || err != nil {
		t.Errorf("static Authorization = %q, %v; want none", v, err)
	}
}
