package accesstoken

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// Leeway is the clock skew allowed on exp, nbf and iat.
const Leeway = 30 * time.Second

// Config says whose tokens the trunk accepts and for what.
type Config struct {
	Issuer   string   // the authorization server's issuer identifier
	Resource string   // the trunk's own URL: tokens must carry it in aud
	Scopes   []string // every token must grant all of these
	// SubjectClaim names the claim that identifies the caller in logs,
	// traces and policy; "sub" when empty.
	SubjectClaim string
	// TokenTypes are the typ headers accepted, compared without case and
	// without an "application/" prefix; RFC 9068's at+jwt when empty.
	TokenTypes []string
	Client     *http.Client     // http.DefaultClient when nil
	Now        func() time.Time // time.Now when nil
}

// Identity is what a valid token says about its bearer.
type Identity struct {
	Subject string
	Scopes  []string
	Claims  map[string]any // every claim, for policy
}

// ErrInvalid is a token that is not one the trunk accepts (401); ErrScope
// a valid token that lacks a required scope (403).
var (
	ErrInvalid = errors.New("invalid_token")
	ErrScope   = errors.New("insufficient_scope")
)

// Verifier checks access tokens against one issuer.
type Verifier struct {
	cfg  Config
	keys *keySet
	// audiences are what a token's aud must name one of: the resource,
	// and for a profile's resource the trunk's own as well.
	audiences jwt.Audience
}

// New returns a verifier; the issuer is not contacted until a token comes.
func New(cfg Config) *Verifier {
	if cfg.SubjectClaim == "" {
		cfg.SubjectClaim = "sub"
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Verifier{cfg: cfg, keys: &keySet{issuer: cfg.Issuer, client: cfg.Client, now: cfg.Now}, audiences: jwt.Audience{cfg.Resource}}
}

// Profile is the verifier of one profile's endpoint (trunk.profiles), a
// resource of its own at <resource>/p/<name>, with its own metadata; the
// issuer's keys are shared. It accepts tokens minted for the profile and
// those minted for the whole trunk: a profile only narrows what the trunk
// shows. A token minted for a profile is refused at the trunk's endpoint,
// and at another profile's.
func (v *Verifier) Profile(name string) *Verifier {
	cfg := v.cfg
	cfg.Resource = strings.TrimSuffix(v.cfg.Resource, "/") + "/p/" + name
	return &Verifier{cfg: cfg, keys: v.keys, audiences: jwt.Audience{cfg.Resource, v.cfg.Resource}}
}

// algorithms are the signatures accepted: RFC 9068 requires RS256 and
// ES256 is its common alternative; "none" and HMAC never are.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// Verify checks a raw token: type at+jwt, signature by one of the
// issuer's keys, iss, aud naming the trunk, exp and nbf with Leeway, and
// the required scopes. Errors wrap ErrInvalid or ErrScope.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Identity, error) {
	tok, err := jwt.ParseSigned(raw, algorithms)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: one signature expected", ErrInvalid)
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !v.acceptsType(typ) {
		return nil, fmt.Errorf("%w: typ %q is not one of %q (trunk.http.auth.tokenTypes)", ErrInvalid, logkey.Clip(typ), v.types())
	}
	key, err := v.keys.key(ctx, h.KeyID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key.Key, &std, &all); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	want := jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: v.audiences, Time: v.cfg.Now()}
	if err := std.ValidateWithLeeway(want, Leeway); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if std.Expiry == nil {
		return nil, fmt.Errorf("%w: no exp", ErrInvalid)
	}
	sub, _ := all[v.cfg.SubjectClaim].(string)
	if sub == "" {
		return nil, fmt.Errorf("%w: no %s claim", ErrInvalid, v.cfg.SubjectClaim)
	}
	id := &Identity{Subject: sub, Scopes: scopes(all), Claims: all}
	for _, s := range v.cfg.Scopes {
		if !slices.Contains(id.Scopes, s) {
			return id, fmt.Errorf("%w: scope %q is required", ErrScope, s)
		}
	}
	return id, nil
}

// types are the typ headers v accepts.
func (v *Verifier) types() []string {
	if len(v.cfg.TokenTypes) == 0 {
		return []string{"at+jwt"}
	}
	return v.cfg.TokenTypes
}

// acceptsType reports whether a token's typ header is one v accepts (RFC
// 7515: compared without case, "application/" may be left out).
func (v *Verifier) acceptsType(typ string) bool {
	norm := func(s string) string { return strings.TrimPrefix(strings.ToLower(s), "application/") }
	return slices.ContainsFunc(v.types(), func(want string) bool { return norm(want) == norm(typ) })
}

// scopes reads RFC 9068's space-separated "scope", or the "scp" list some
// servers send instead.
func scopes(claims map[string]any) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	list, _ := claims["scp"].([]any)
	var out []string
	for _, s := range list {
		if str, ok := s.(string); ok {
			out = append(out, str)
		}
	}
	return out
}
