package hydra

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// loginAndConsent is Hydra's login and consent app: it signs in the user
// the authorization request names in login_hint, and grants what the
// client asked, the access token carrying that user's claims.
func (s *Server) loginAndConsent() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		challenge := r.URL.Query().Get("login_challenge")
		var req struct {
			OIDCContext struct {
				LoginHint string `json:"login_hint"`
			} `json:"oidc_context"`
		}
		if err := s.admin(http.MethodGet, "/admin/oauth2/auth/requests/login?login_challenge="+url.QueryEscape(challenge), nil, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		user := req.OIDCContext.LoginHint
		if _, ok := s.users[user]; !ok {
			http.Error(w, fmt.Sprintf("no such user %q", user), http.StatusForbidden)
			return
		}
		s.accept(w, r, "/admin/oauth2/auth/requests/login/accept?login_challenge="+url.QueryEscape(challenge), map[string]any{"subject": user})
	})
	mux.HandleFunc("/consent", func(w http.ResponseWriter, r *http.Request) {
		challenge := r.URL.Query().Get("consent_challenge")
		var req struct {
			Subject  string   `json:"subject"`
			Scope    []string `json:"requested_scope"`
			Audience []string `json:"requested_access_token_audience"`
		}
		if err := s.admin(http.MethodGet, "/admin/oauth2/auth/requests/consent?consent_challenge="+url.QueryEscape(challenge), nil, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		s.accept(w, r, "/admin/oauth2/auth/requests/consent/accept?consent_challenge="+url.QueryEscape(challenge), map[string]any{
			"grant_scope": req.Scope, "grant_access_token_audience": req.Audience,
			"session": map[string]any{"access_token": s.users[req.Subject]},
		})
	})
	return mux
}

// accept accepts a login or consent request and sends the browser on.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, path string, body any) {
	var next struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := s.admin(http.MethodPut, path, body, &next); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, next.RedirectTo, http.StatusFound)
}

// admin calls Hydra's admin API.
func (s *Server) admin(method, path string, body, out any) error {
	var in io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		in = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.Admin+path, in)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("hydra %s %s: HTTP %d: %s", method, path, res.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// Client registers a public OAuth client (PKCE, no secret) allowed to ask
// for the audiences, and returns its id.
func (s *Server) Client(t testing.TB, audiences ...string) string {
	t.Helper()
	var c struct {
		ClientID string `json:"client_id"`
	}
	err := s.admin(http.MethodPost, "/admin/clients", map[string]any{
		"client_name": "mcptrunk test host", "redirect_uris": []string{redirectURI},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"scope": "openid offline mcp", "audience": audiences, "token_endpoint_auth_method": "none",
	}, &c)
	if err != nil {
		t.Fatal(err)
	}
	return c.ClientID
}

// redirectURI is where the client's browser is sent back with the code;
// nothing listens there: the flow stops at the redirect and reads it.
const redirectURI = "http://127.0.0.1:1/callback"

var errArrived = errors.New("arrived at the redirect URI")

// Token signs user in as client's browser would and returns the access
// token it is granted for audience and scope: the authorization code flow
// with PKCE (S256) and state, through Hydra's login and consent.
//
// Under heavy load Hydra has answered invalid_grant to a code it had just
// issued (with a file database too, and nothing in its log): the flow is
// then run once more, logged, as a user would sign in again. The trunk is
// not on this path: the token is Hydra's to give.
func (s *Server) Token(t testing.TB, ctx context.Context, client, user, audience, scope string) string {
	t.Helper()
	token, refused := s.signIn(t, ctx, client, user, audience, scope)
	if refused != "" {
		t.Logf("hydra refused %s's code (%s): signing in again", user, refused)
		token, refused = s.signIn(t, ctx, client, user, audience, scope)
	}
	if refused != "" {
		t.Fatalf("exchanging %s's code: %s\nhydra:\n%s", user, refused, s.Out)
	}
	return token
}

// signIn runs the flow once: the access token, or why Hydra refused to
// exchange the code for one (invalid_grant only; anything else fails t).
func (s *Server) signIn(t testing.TB, ctx context.Context, client, user, audience, scope string) (token, refused string) {
	t.Helper()
	verifier, state := oauth.NewVerifier(), oauth.NewVerifier()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirectURI},
		"scope": {scope}, "state": {state}, "audience": {audience}, "login_hint": {user},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	jar, _ := cookiejar.New(nil)
	var back *url.URL
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirectURI) {
			back = r.URL
			return errArrived
		}
		return nil
	}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Issuer+"/oauth2/auth?"+q.Encode(), nil)
	res, err := browser.Do(req)
	if err == nil {
		raw, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		t.Fatalf("signing %s in ended at %s (HTTP %d) without coming back: %s", user, res.Request.URL, res.StatusCode, raw)
	}
	if !errors.Is(err, errArrived) {
		t.Fatalf("signing %s in: %v", user, err)
	}
	if got := back.Query().Get("state"); got != state {
		t.Fatalf("came back with state %q, want %q (error %q: %s)", got, state, back.Query().Get("error"), back.Query().Get("error_description"))
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirectURI}, "client_id": {client}, "code_verifier": {verifier}}
	tres, err := http.PostForm(s.Issuer+"/oauth2/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer tres.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	err = json.NewDecoder(tres.Body).Decode(&tok)
	switch {
	case err == nil && tok.AccessToken != "":
		return tok.AccessToken, ""
	case tok.Error == "invalid_grant":
		return "", fmt.Sprintf("HTTP %d, %s %s", tres.StatusCode, tok.Error, tok.Description)
	}
	t.Fatalf("exchanging %s's code: HTTP %d, %s %s (%v)\nhydra:\n%s", user, tres.StatusCode, tok.Error, tok.Description, err, s.Out)
	return "", ""
}
