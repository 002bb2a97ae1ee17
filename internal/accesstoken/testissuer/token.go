package testissuer

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The token endpoint: RFC 8693 token exchange (a subject token of this
// issuer traded for one with the same sub and the requested audience) and
// the client credentials grant, both for registered clients only.

// Grant types and token types of RFC 8693.
const (
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// Issued is one token the endpoint minted.
type Issued struct {
	Grant    string // "exchange", "client_credentials", "authorization_code" or "refresh_token"
	Client   string
	Subject  string
	Audience string
	Token    string // what was minted, for a test to look for where it went
}

// AddClient registers a confidential client of the token endpoint.
func (iss *Issuer) AddClient(id, secret string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.clients[id] = secret
}

// Refuse makes every token exchange for audience get the OAuth error
// code; "" lifts the refusal.
func (iss *Issuer) Refuse(audience, code string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.refused[audience] = code
}

// SetTokenTTL sets the lifetime of the tokens the endpoint mints.
func (iss *Issuer) SetTokenTTL(d time.Duration) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.tokenTTL = d
}

// Issued returns the tokens minted so far, oldest first.
func (iss *Issuer) Issued() []Issued {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return slices.Clone(iss.issued)
}

func (iss *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	if g := r.PostForm.Get("grant_type"); g == "authorization_code" || g == "refresh_token" {
		iss.serveCodeToken(w, r, g)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	iss.mu.Lock()
	want, known := iss.clients[id]
	refusal := iss.refused[audienceOf(r)]
	ttl := iss.tokenTTL
	iss.mu.Unlock()
	if !known || secret != want || id == "" {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	aud := audienceOf(r)
	var got Issued
	switch r.PostForm.Get("grant_type") {
	case GrantTokenExchange:
		if refusal != "" {
			tokenError(w, http.StatusBadRequest, refusal)
			return
		}
		if r.PostForm.Get("subject_token_type") != TokenTypeAccess {
			tokenError(w, http.StatusBadRequest, "invalid_request")
			return
		}
		sub, ok := iss.subjectOf(r.PostForm.Get("subject_token"))
		if !ok {
			tokenError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		got = Issued{Grant: "exchange", Client: id, Subject: sub, Audience: aud}
	case "client_credentials":
		got = Issued{Grant: "client_credentials", Client: id, Subject: id, Audience: aud}
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	if aud == "" {
		tokenError(w, http.StatusBadRequest, "invalid_target")
		return
	}
	extra := map[string]any{"client_id": id}
	if got.Grant == "exchange" {
		extra["act"] = map[string]any{"sub": id} // RFC 8693 section 4.1: who acts for the subject
	}
	tok, err := jwt.Signed(iss.CurrentSigner()).Claims(iss.Claims(got.Subject, aud, ttl)).Claims(extra).Serialize()
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	got.Token = tok
	iss.mu.Lock()
	iss.issued = append(iss.issued, got)
	iss.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": tok, "issued_token_type": TokenTypeAccess, "token_type": "Bearer", "expires_in": int(ttl.Seconds()),
	})
}

// audienceOf is what a request asks the token for: its audience, else its
// resource (RFC 8707).
func audienceOf(r *http.Request) string {
	if a := r.PostForm.Get("audience"); a != "" {
		return a
	}
	return r.PostForm.Get("resource")
}

// subjectOf checks a subject token as this issuer's own, signed by one of
// its keys and not expired, and returns its sub.
func (iss *Issuer) subjectOf(raw string) (string, bool) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil || len(tok.Headers) != 1 {
		return "", false
	}
	iss.mu.Lock()
	var key any
	for _, k := range iss.published {
		if k.KeyID == tok.Headers[0].KeyID {
			key = k.Key
		}
	}
	iss.mu.Unlock()
	var c jwt.Claims
	if key == nil || tok.Claims(key, &c) != nil {
		return "", false
	}
	if c.ValidateWithLeeway(jwt.Expected{Issuer: iss.URL, Time: time.Now()}, 0) != nil || c.Subject == "" {
		return "", false
	}
	return c.Subject, true
}

func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "refused by the test issuer"})
}
