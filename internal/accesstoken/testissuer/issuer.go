// Package testissuer is an authorization server for tests: OpenID Connect
// discovery and a JWKS over httptest, access tokens (RFC 9068) signed with
// go-jose, with keys that can be rotated, a token endpoint (token.go)
// for RFC 8693 token exchange and the client credentials grant, and an
// authorization endpoint (authorize.go) for the code flow with PKCE,
// dynamic registration and refresh tokens.
package testissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer serves discovery and keys until the test ends.
type Issuer struct {
	URL      string
	KeyFetch atomic.Int32 // how many times the key set was served
	// Hold, when set, runs before the key set is served: a test stalls
	// the issuer with it.
	Hold      atomic.Pointer[func()]
	mu        sync.Mutex
	published []jose.JSONWebKey
	signer    jose.Signer
	plain     jose.Signer // the same key, typ "JWT" (TokenTyped)
	seq       int
	clients   map[string]string // client id -> secret, for the token endpoint
	refused   map[string]string // audience -> the error code an exchange for it gets
	tokenTTL  time.Duration     // of the tokens the token endpoint mints
	issued    []Issued
	codes     codeGrants // the authorization endpoint's (authorize.go)
}

// New starts an issuer with one RSA signing key.
func New(t testing.TB) *Issuer {
	iss := &Issuer{clients: map[string]string{}, refused: map[string]string{}, tokenTTL: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks", "token_endpoint": iss.URL + "/token",
			"authorization_endpoint": iss.URL + "/authorize", "registration_endpoint": iss.URL + "/register", "code_challenge_methods_supported": []string{"S256"}, "authorization_response_iss_parameter_supported": true})
	})
	iss.serveAuthorize(mux)
	mux.HandleFunc("POST /token", iss.serveToken)
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		iss.KeyFetch.Add(1)
		if hold := iss.Hold.Load(); hold != nil {
			(*hold)()
		}
		iss.mu.Lock()
		defer iss.mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: iss.published})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	iss.Rotate(t, jose.RS256)
	return iss
}

// Rotate makes a new key (RS256 or ES256) the signing one, publishing it
// beside the old ones.
func (iss *Issuer) Rotate(t testing.TB, alg jose.SignatureAlgorithm) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.seq++
	var priv crypto.Signer
	var err error
	if alg == jose.ES256 {
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	kid := "k" + strconv.Itoa(iss.seq)
	iss.signer = Signer(t, alg, priv, kid)
	iss.plain = typedSigner(t, alg, priv, kid, "JWT")
	iss.published = append(iss.published, jose.JSONWebKey{Key: priv.Public(), KeyID: kid, Algorithm: string(alg), Use: "sig"})
}

// Signer signs at+jwt tokens with key under kid; a test forges tokens
// with a key of its own.
func Signer(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string) jose.Signer {
	return typedSigner(t, alg, key, kid, "at+jwt")
}

func typedSigner(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string) jose.Signer {
	opts := (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", kid)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// PlainJWT issues what Token does, signed with the same key but with
// typ "JWT", as Ory Hydra, Keycloak and Entra ID type their access tokens.
func (iss *Issuer) PlainJWT(t testing.TB, sub, aud string, extra map[string]any) string {
	iss.mu.Lock()
	s := iss.plain
	iss.mu.Unlock()
	return Sign(t, s, iss.Claims(sub, aud, time.Hour), extra)
}

// Token issues a token for sub and audience aud, valid for an hour, with
// extra claims (scope, groups, ...) on top.
func (iss *Issuer) Token(t testing.TB, sub, aud string, extra map[string]any) string {
	return Sign(t, iss.CurrentSigner(), iss.Claims(sub, aud, time.Hour), extra)
}

// Claims are the registered claims of a token that expires after ttl
// (negative: already expired).
func (iss *Issuer) Claims(sub, aud string, ttl time.Duration) jwt.Claims {
	now := time.Now()
	return jwt.Claims{Issuer: iss.URL, Subject: sub, Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), Expiry: jwt.NewNumericDate(now.Add(ttl))}
}

// Sign serializes a token from registered and extra claims.
func Sign(t testing.TB, s jose.Signer, c jwt.Claims, extra map[string]any) string {
	raw, err := jwt.Signed(s).Claims(c).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// CurrentSigner is the signer of the issuer's current key, for tokens
// with claims Token does not make (expired ones).
func (iss *Issuer) CurrentSigner() jose.Signer {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.signer
}
