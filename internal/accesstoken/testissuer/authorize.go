package testissuer

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// The authorization code flow with PKCE (S256 only), for servers whose
// callers sign in themselves: dynamic registration of public clients
// (RFC 7591), an authorization endpoint that approves whoever is logged
// in, and the code and refresh token grants at the token endpoint.
//
// There is no login page: a test logs its "browser" (an http.Client with
// a cookie jar) in with a GET of LoginURL(user), and the authorization
// endpoint then approves that user at once, redirecting with a code.

const loginCookie = "testissuer-user"

// codeGrants is the flow's state: registered clients, codes not yet used,
// refresh tokens and the users whose refresh tokens are revoked.
type codeGrants struct {
	clients map[string][]string // public client id -> redirect URIs
	codes   map[string]codeGrant
	refresh map[string]codeGrant // refresh token -> what it renews
	revoked map[string]bool      // subject -> its refresh tokens refused
}

type codeGrant struct {
	client, redirect, challenge, sub, resource string
}

// Registered counts the public clients registered dynamically with
// redirect among their redirect URIs.
func (iss *Issuer) Registered(redirect string) int {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	n := 0
	for _, uris := range iss.codes.clients {
		if slices.Contains(uris, redirect) {
			n++
		}
	}
	return n
}

// LoginURL logs a browser in as user when it GETs it: the authorization
// endpoint approves that user.
func (iss *Issuer) LoginURL(user string) string {
	return iss.URL + "/login?user=" + url.QueryEscape(user)
}

// Browser is an HTTP client with a cookie jar, logged in at the issuer as
// user: the browser of a test's sign-in, which follows redirects.
func (iss *Issuer) Browser(t testing.TB, user string) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.Get(iss.LoginURL(user))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return c
}

// Visit GETs u with a browser, following redirects, and returns the
// status and the page.
func Visit(t testing.TB, browser *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := browser.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// RevokeRefresh makes the refresh tokens of sub refused from now on.
func (iss *Issuer) RevokeRefresh(sub string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.codes.revoked[sub] = true
}

func (iss *Issuer) serveAuthorize(mux *http.ServeMux) {
	iss.codes = codeGrants{clients: map[string][]string{}, codes: map[string]codeGrant{}, refresh: map[string]codeGrant{}, revoked: map[string]bool{}}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: r.URL.Query().Get("user"), Path: "/"})
		_, _ = w.Write([]byte("logged in\n"))
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) == 0 {
			tokenError(w, http.StatusBadRequest, "invalid_redirect_uri")
			return
		}
		id := random()
		iss.mu.Lock()
		iss.codes.clients[id] = req.RedirectURIs
		iss.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", iss.authorize)
}

// authorize approves the logged-in user: a redirect with a code (and the
// state and iss), or 400 for a request that is not a valid one.
func (iss *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	iss.mu.Lock()
	uris, known := iss.codes.clients[q.Get("client_id")]
	iss.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if !known || !slices.Contains(uris, redirect) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	user, err := r.Cookie(loginCookie)
	if err != nil || user.Value == "" {
		http.Error(w, "nobody is logged in (GET the issuer's LoginURL first)", http.StatusUnauthorized)
		return
	}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		http.Error(w, "a code request with an S256 challenge and a resource is required", http.StatusBadRequest)
		return
	}
	code := random()
	iss.mu.Lock()
	iss.codes.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), sub: user.Value, resource: q.Get("resource")}
	iss.mu.Unlock()
	back, _ := url.Parse(redirect)
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	bq.Set("iss", iss.URL)
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// serveCodeToken answers the code and refresh token grants of public
// clients: a code is used once, with its verifier and redirect URI; a
// refresh token is kept (not rotated) until its subject is revoked.
func (iss *Issuer) serveCodeToken(w http.ResponseWriter, r *http.Request, grant string) {
	f := r.PostForm
	iss.mu.Lock()
	var g codeGrant
	var ok bool
	if grant == "authorization_code" {
		g, ok = iss.codes.codes[f.Get("code")]
		delete(iss.codes.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		ok = ok && f.Get("redirect_uri") == g.redirect &&
			subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.challenge)) == 1
	} else {
		g, ok = iss.codes.refresh[f.Get("refresh_token")]
		ok = ok && !iss.codes.revoked[g.sub]
	}
	ttl := iss.tokenTTL
	iss.mu.Unlock()
	if !ok || f.Get("client_id") != g.client {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	tok, err := jwt.Signed(iss.CurrentSigner()).Claims(iss.Claims(g.sub, g.resource, ttl)).Claims(map[string]any{"client_id": g.client, "jti": random()}).Serialize()
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	refresh := f.Get("refresh_token")
	iss.mu.Lock()
	if refresh == "" {
		refresh = random()
		iss.codes.refresh[refresh] = g
	}
	iss.issued = append(iss.issued, Issued{Grant: grant, Client: g.client, Subject: g.sub, Audience: g.resource, Token: tok})
	iss.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int(ttl.Seconds()), "refresh_token": refresh,
	})
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
