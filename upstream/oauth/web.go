package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// The authorization code flow for a redirect that is not the flow's own:
// a trunk whose callers each sign in to a server (credentials mode
// "oauth", proxy/signin) receives the redirect on its own listener, keeps
// the state and the verifier itself, and keeps the tokens per caller
// (in its state store: Grant's MarshalBinary). Discovery, registration,
// PKCE and the token requests are the same as "mcptrunk auth"'s; nothing
// here is stored on disk.

// WebClient is the trunk as a client of one server's authorization
// server, for one redirect URI.
type WebClient struct {
	hc       *http.Client
	d        *discovery
	reg      tokenRecord // the client: configured or registered dynamically
	redirect string
	scopes   []string
}

// NewWebClient finds spec's authorization server (the server's 401 and
// metadata) and its client there: spec's ClientID, else a dynamic
// registration for redirect.
func NewWebClient(ctx context.Context, spec Server, redirect string, logger *slog.Logger) (*WebClient, error) {
	return NewWebClientReusing(ctx, spec, redirect, logger, nil)
}

// NewWebClientReusing is NewWebClient reusing a dynamic registration
// another WebClient made (its Registration), when it is for the same
// issuer and redirect: replicas of one trunk then sign in as one client.
func NewWebClientReusing(ctx context.Context, spec Server, redirect string, logger *slog.Logger, registration []byte) (*WebClient, error) {
	var stored *tokenRecord
	if len(registration) > 0 {
		stored = &tokenRecord{}
		if err := json.Unmarshal(registration, stored); err != nil {
			stored = nil
		}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	hc := newAuthClient()
	bearer, _ := probe(ctx, hc, spec, logger)
	d, err := discover(ctx, hc, spec, bearer)
	if err != nil {
		return nil, err
	}
	scopes := spec.Scopes
	if len(scopes) == 0 {
		scopes = d.scopes
	}
	reg, err := clientRegistration(ctx, hc, spec, d, stored, redirect, scopes, logger)
	if err != nil {
		return nil, err
	}
	return &WebClient{hc: hc, d: d, reg: reg, redirect: redirect, scopes: scopes}, nil
}

// Registration is the client c signs in as (its id, secret and how it
// authenticates, for its issuer and redirect), to be kept sealed: it may
// hold a client secret. NewWebClientReusing and With take it.
func (c *WebClient) Registration() ([]byte, error) {
	return json.Marshal(tokenRecord{Issuer: c.reg.Issuer, RedirectURI: c.reg.RedirectURI, ClientID: c.reg.ClientID,
		ClientSecret: c.reg.ClientSecret, TokenAuthMethod: c.reg.TokenAuthMethod, Registered: c.reg.Registered})
}

// With is c signing in as the client of registration (another
// WebClient's Registration for the same issuer and redirect): a sign-in
// started by one replica is completed by another as the client it began
// with.
func (c *WebClient) With(registration []byte) (*WebClient, error) {
	var r tokenRecord
	if err := json.Unmarshal(registration, &r); err != nil {
		return nil, fmt.Errorf("a client registration: %w", err)
	}
	if r.ClientID == "" || r.Issuer != c.reg.Issuer || r.RedirectURI != c.redirect {
		return nil, errors.New("the sign-in began as a client of another authorization server or redirect")
	}
	cp := *c
	cp.reg.ClientID, cp.reg.ClientSecret, cp.reg.TokenAuthMethod, cp.reg.Registered = r.ClientID, r.ClientSecret, r.TokenAuthMethod, r.Registered
	return &cp, nil
}

// NewVerifier returns a PKCE code verifier (or a state): 32 random bytes.
func NewVerifier() string { return randomString(32) }

// AuthURL is the authorization request carrying state and the S256
// challenge of verifier.
func (c *WebClient) AuthURL(state, verifier string) (string, error) {
	return authorizationURL(c.d, c.reg.ClientID, c.redirect, c.scopes, state, verifier)
}

// Exchange reads the redirect's query (its state already matched by the
// caller) and trades its code for tokens.
func (c *WebClient) Exchange(ctx context.Context, q url.Values, verifier string) (*Grant, error) {
	code, err := authorizationResponse(q, c.d)
	if err != nil {
		return nil, err
	}
	rec, err := exchangeCode(ctx, c.hc, c.reg, c.redirect, code, verifier)
	if err != nil {
		return nil, err
	}
	return &Grant{rec: *rec}, nil
}

// Refresh uses g's refresh token for a new access token. A refusal (a
// revoked or expired refresh token) is Permanent.
func (c *WebClient) Refresh(ctx context.Context, g *Grant) (*Grant, error) {
	if g.rec.RefreshToken == "" {
		return nil, &tokenError{status: http.StatusBadRequest, code: "no refresh token"}
	}
	rec, err := refreshGrant(ctx, c.hc, &g.rec)
	if err != nil {
		return nil, err
	}
	return &Grant{rec: *rec}, nil
}

// Permanent reports whether err is the authorization server's refusal of
// a grant (as opposed to its failing or being out of reach).
func Permanent(err error) bool { return isPermanentTokenError(err) }

// Grant is the tokens one sign-in got. Never logged.
type Grant struct{ rec tokenRecord }

// Authorization is the Authorization header value of the access token.
func (g *Grant) Authorization() string { return "Bearer " + g.rec.AccessToken }

// Expiry of the access token; zero when the server did not say.
func (g *Grant) Expiry() time.Time { return g.rec.Expiry }

// NeedsRefresh reports whether the access token expires soon at now
// (within a fifth of its life, at most 30 s) and a refresh token can
// replace it.
func (g *Grant) NeedsRefresh(now time.Time) bool {
	return g.rec.RefreshToken != "" && g.rec.needsRefresh(now)
}

// Refreshable reports whether g holds a refresh token.
func (g *Grant) Refreshable() bool { return g.rec.RefreshToken != "" }

// MarshalBinary is g as a state store keeps it: the tokens, and the
// client and token endpoint that refresh them, so that any replica can.
// It holds secrets: the store seals it, and it is never logged.
func (g *Grant) MarshalBinary() ([]byte, error) { return json.Marshal(&g.rec) }

// UnmarshalBinary reads what MarshalBinary wrote; a record without an
// access token is refused.
func (g *Grant) UnmarshalBinary(b []byte) error {
	var rec tokenRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return err
	}
	if !rec.usable() {
		return errors.New("a stored grant without an access token")
	}
	g.rec = rec
	return nil
}

// Expired reports whether the access token has expired at now.
func (g *Grant) Expired(now time.Time) bool {
	return !g.rec.Expiry.IsZero() && !now.Before(g.rec.Expiry)
}
