package accesstoken_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
)

const resource = "https://trunk.example/mcp"

func verifier(iss *testissuer.Issuer, scopes ...string) *accesstoken.Verifier {
	return accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: resource, Scopes: scopes, SubjectClaim: "email"})
}

func TestVerifyAcceptsTokenForTheTrunk(t *testing.T) {
	iss := testissuer.New(t)
	v := verifier(iss, "mcp")
	id, err := v.Verify(context.Background(), iss.Token(t, "u1", resource, map[string]any{"email": "ann@example.com", "scope": "openid mcp"}))
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "ann@example.com" || strings.Join(id.Scopes, " ") != "openid mcp" {
		t.Fatalf("identity = %+v", id)
	}
}

// An access token typed "JWT" (Ory Hydra's, Keycloak's) is refused by
// default, as RFC 9068 says, and accepted where tokenTypes lists "JWT";
// at+jwt then no longer is, unless listed too.
func TestVerifyTokenTypes(t *testing.T) {
	iss := testissuer.New(t)
	claims := map[string]any{"email": "ann@example.com"}
	plain, typed := iss.PlainJWT(t, "u1", resource, claims), iss.Token(t, "u1", resource, claims)
	strict := verifier(iss)
	if _, err := strict.Verify(context.Background(), plain); !errors.Is(err, accesstoken.ErrInvalid) || !strings.Contains(err.Error(), `typ "JWT"`) {
		t.Errorf("a typ JWT token by default: %v, want invalid naming its typ", err)
	}
	for _, tc := range []struct {
		types        []string
		plain, atJWT bool
	}{
		{[]string{"JWT"}, true, false},
		{[]string{"at+jwt", "jwt"}, true, true},
		{[]string{"application/at+jwt"}, false, true},
	} {
		v := accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: resource, SubjectClaim: "email", TokenTypes: tc.types})
		_, errPlain := v.Verify(context.Background(), plain)
		_, errTyped := v.Verify(context.Background(), typed)
		if (errPlain == nil) != tc.plain || (errTyped == nil) != tc.atJWT {
			t.Errorf("tokenTypes %q: typ JWT -> %v, at+jwt -> %v; want accepted %v and %v", tc.types, errPlain, errTyped, tc.plain, tc.atJWT)
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	iss := testissuer.New(t)
	v := verifier(iss, "mcp")
	ok := map[string]any{"email": "ann@example.com", "scope": "mcp"}
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	plainJWT, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: forger}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"another audience", iss.Token(t, "u1", "https://other.example/mcp", ok), accesstoken.ErrInvalid},
		{"expired", testissuer.Sign(t, iss.CurrentSigner(), iss.Claims("u1", resource, -2*accesstoken.Leeway), ok), accesstoken.ErrInvalid},
		{"forged signature", testissuer.Sign(t, testissuer.Signer(t, jose.RS256, forger, "k1"), iss.Claims("u1", resource, time.Hour), ok), accesstoken.ErrInvalid},
		{"not an access token", testissuer.Sign(t, plainJWT, iss.Claims("u1", resource, time.Hour), ok), accesstoken.ErrInvalid},
		{"no subject", iss.Token(t, "u1", resource, map[string]any{"scope": "mcp"}), accesstoken.ErrInvalid},
		{"missing scope", iss.Token(t, "u1", resource, map[string]any{"email": "ann@example.com", "scope": "openid"}), accesstoken.ErrScope},
		{"garbage", "not.a.token", accesstoken.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), c.token)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestVerifyFollowsKeyRotationRateLimited(t *testing.T) {
	iss := testissuer.New(t)
	now := time.Now()
	v := accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: resource, SubjectClaim: "email", Now: func() time.Time { return now }})
	ctx := context.Background()
	claims := map[string]any{"email": "ann@example.com"}
	if _, err := v.Verify(ctx, iss.Token(t, "u1", resource, claims)); err != nil {
		t.Fatal(err)
	}
	iss.Rotate(t, jose.ES256)
	now = now.Add(accesstoken.RefetchEvery)
	if _, err := v.Verify(ctx, iss.Token(t, "u1", resource, claims)); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if n := iss.KeyFetch.Load(); n != 2 {
		t.Fatalf("key set fetched %d times, want 2", n)
	}
	if _, err := v.Verify(ctx, iss.Token(t, "u1", resource, claims)); err != nil {
		t.Fatalf("again: %v", err)
	}
	// An unknown kid right after a fetch does not reach the issuer again.
	forger, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged := testissuer.Sign(t, testissuer.Signer(t, jose.RS256, forger, "nope"), iss.Claims("u1", resource, time.Hour), claims)
	for range 3 {
		if _, err := v.Verify(ctx, forged); !errors.Is(err, accesstoken.ErrInvalid) {
			t.Fatalf("forged kid: %v", err)
		}
	}
	if n := iss.KeyFetch.Load(); n != 2 {
		t.Fatalf("key set fetched %d times after unknown kids, want 2", n)
	}
}

func TestChallengeAndMetadataURL(t *testing.T) {
	iss := testissuer.New(t)
	v := verifier(iss, "mcp")
	if got, want := v.MetadataURL(), "https://trunk.example/.well-known/oauth-protected-resource/mcp"; got != want {
		t.Fatalf("MetadataURL = %s, want %s", got, want)
	}
	if c := v.Challenge(accesstoken.ErrScope); !strings.Contains(c, `error="insufficient_scope", scope="mcp"`) || !strings.HasPrefix(c, `Bearer resource_metadata="https://trunk.example/`) {
		t.Fatalf("Challenge = %s", c)
	}
}

// TestSlowIssuerHoldsUpOnlyUnknownKeys: while a fetch of the key set
// stalls (a token signed by a key not held yet), a token whose key is held
// is checked at once, and the stalled check ends with its own request.
func TestSlowIssuerHoldsUpOnlyUnknownKeys(t *testing.T) {
	iss := testissuer.New(t)
	now := time.Now()
	v := accesstoken.New(accesstoken.Config{Issuer: iss.URL, Resource: resource, SubjectClaim: "email", Now: func() time.Time { return now }})
	claims := map[string]any{"email": "ann@example.com"}
	known := iss.Token(t, "u1", resource, claims)
	if _, err := v.Verify(context.Background(), known); err != nil {
		t.Fatal(err)
	}
	stalled, release := make(chan struct{}), make(chan struct{})
	hold := func() { close(stalled); <-release }
	iss.Hold.Store(&hold)
	defer close(release)
	iss.Rotate(t, jose.ES256)
	now = now.Add(accesstoken.RefetchEvery)

	ctx, cancel := context.WithCancel(context.Background())
	unknownDone := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, iss.Token(t, "u1", resource, claims))
		unknownDone <- err
	}()
	<-stalled
	knownDone := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), known)
		knownDone <- err
	}()
	select {
	case err := <-knownDone:
		if err != nil {
			t.Errorf("the token of a held key: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a token whose key is held waited for the stalled fetch")
	}
	cancel()
	if err := <-unknownDone; err == nil {
		t.Error("the token of an unfetched key passed while the issuer stalled")
	}
}

// TestCheckDuringFetchJoinsIt: a token checked while the first fetch of
// the key set is under way waits for that fetch (here, until its own
// context ends) rather than being refused for a key the set has not
// been read for yet: a burst of a replica's first requests all pass.
func TestCheckDuringFetchJoinsIt(t *testing.T) {
	iss := testissuer.New(t)
	v := verifier(iss)
	token := iss.Token(t, "u1", resource, map[string]any{"email": "ann@example.com"})
	during := make(chan error, 1)
	hold := func() { // the first fetch is under way
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := v.Verify(ctx, token)
		during <- err
	}
	iss.Hold.Store(&hold)
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("the first check: %v", err)
	}
	if err := <-during; err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("a check during the fetch: %v; want it waiting for the fetch until its context ended", err)
	}
}
