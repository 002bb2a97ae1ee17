package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/naming"
)

// The authorization code flow with PKCE (OAuth 2.1 §4.1, RFC 7636), for
// "mcptrunk auth" and for the background flow of a long-running trunk:
//
//	discover (discovery.go) -> listen on 127.0.0.1 -> client id (config,
//	stored registration, or dynamic registration, RFC 7591) -> print the
//	authorization URL (and open a browser) -> the redirect brings code and
//	state -> exchange the code with the verifier -> store the tokens.
//
// Both the authorization request and the token requests carry the resource
// parameter (RFC 8707). The callback accepts only a request with the state
// it sent, and checks the iss parameter (RFC 9207) when there is one.

// AuthorizeOptions configure Authorize.
type AuthorizeOptions struct {
	// Logger receives progress records (never a token, code or verifier);
	// nil discards them.
	Logger *slog.Logger
	// Prompt is given the URL the user must open to authorise mcptrunk.
	Prompt func(authURL string)
	// OpenBrowser tries to open that URL in the user's browser as well.
	OpenBrowser bool
	// Cause, when set, is the error that made authorisation necessary; the
	// server's challenge in it spares asking the server for it again.
	Cause *AuthRequiredError
}

// AuthResult says what Authorize stored.
type AuthResult struct {
	File        string    // the token file
	Expiry      time.Time // of the access token; zero when not given
	Scope       string    // granted, when the server said
	Refreshable bool      // a refresh token was issued
}

// Authorize runs the authorization code flow for spec's server and stores
// the tokens: it finds the authorization server, registers mcptrunk with
// it when needed, hands the authorization URL to opts.Prompt, waits for the
// browser's redirect to 127.0.0.1 (until ctx ends), and exchanges the code.
func Authorize(ctx context.Context, spec Server, opts AuthorizeOptions) (AuthResult, error) {
	if !spec.usesOAuth() {
		if spec.URL == "" {
			return AuthResult{}, fmt.Errorf("server %q is not a remote server: OAuth is for \"http\" and \"sse\" servers", spec.Name)
		}
		return AuthResult{}, fmt.Errorf("server %q has an Authorization header in its config, which turns OAuth off", spec.Name)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	id, err := naming.ServerID(spec.Name)
	if err != nil {
		id = spec.Name
	}
	logger = logger.With(logkey.Server, id)
	hc := newAuthClient()
	defer hc.CloseIdleConnections()
	var bearer *challenge
	status := 0
	if opts.Cause != nil && opts.Cause.bearer != nil {
		bearer = opts.Cause.bearer
	} else {
		bearer, status = probe(ctx, hc, spec, logger)
	}
	rec, err := runFlow(ctx, hc, flowParams{
		spec: spec, server: id, bearer: bearer, logger: logger,
		prompt: opts.Prompt, openBrowser: opts.OpenBrowser,
	})
	if err != nil {
		if httpx.Is2xx(status) && strings.HasPrefix(err.Error(), "discovering") {
			err = fmt.Errorf("the server answers without a token (HTTP %d) and publishes no OAuth metadata, so it does not seem to use OAuth (%w)", status, err)
		}
		return AuthResult{}, err
	}
	file, _ := defaultTokenStore().path(rec.Server)
	return AuthResult{File: file, Expiry: rec.Expiry, Scope: rec.Scope, Refreshable: rec.RefreshToken != ""}, nil
}

// probe makes one unauthenticated request to the server for its 401 and
// returns the Bearer challenge in it (nil when there is none), and the
// status (0 when the request failed).
func probe(ctx context.Context, hc *http.Client, spec Server, logger *slog.Logger) (*challenge, int) {
	ctx, cancel := context.WithTimeout(ctx, authHTTPTimeout)
	defer cancel()
	var req *http.Request
	var err error
	if spec.SSE {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, spec.URL, nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
	} else {
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocol.Version +
			`","capabilities":{},"clientInfo":{"name":"mcptrunk","version":"auth"}}}`
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, spec.URL, strings.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
	}
	if err != nil {
		return nil, 0
	}
	httpx.SetHeaders(req, spec.Headers)
	resp, err := hc.Do(req)
	if err != nil {
		logger.Debug("probing the server failed; trying its well-known metadata", logkey.Error, authNetError(err))
		return nil, 0
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return bearerChallenge(parseChallenges(resp.Header.Values("WWW-Authenticate"))), resp.StatusCode
	}
	logger.Debug("the server did not ask for authorisation; trying its well-known metadata", "status", resp.StatusCode)
	if sid := resp.Header.Get(protocol.HeaderSessionID); sid != "" && !spec.SSE {
		// The probe opened a session: end it.
		if del, err := http.NewRequestWithContext(ctx, http.MethodDelete, spec.URL, nil); err == nil {
			httpx.SetHeaders(del, spec.Headers)
			del.Header.Set(protocol.HeaderSessionID, sid)
			if r, err := hc.Do(del); err == nil {
				r.Body.Close()
			}
		}
	}
	return nil, resp.StatusCode
}

type flowParams struct {
	spec        Server
	server      string // id, for messages
	bearer      *challenge
	logger      *slog.Logger
	prompt      func(authURL string)
	openBrowser bool
}

// runFlow runs discovery and the authorization code flow, and stores the
// tokens.
func runFlow(ctx context.Context, hc *http.Client, fp flowParams) (*tokenRecord, error) {
	spec, logger := fp.spec, fp.logger
	key := canonicalResource(spec.URL)
	store := defaultTokenStore()
	stored, err := store.load(key)
	if err != nil {
		logger.Warn("ignoring the stored OAuth state", logkey.Error, err)
		stored = nil
	}
	d, err := discover(ctx, hc, spec, fp.bearer)
	if err != nil {
		return nil, err
	}
	logger.Debug("authorization server found", "issuer", d.issuer, "resource", d.resource)

	ln, err := listenCallback(spec, stored, d.issuer)
	if err != nil {
		return nil, err
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	scopes := spec.Scopes
	if len(scopes) == 0 {
		scopes = d.scopes
	}
	reg, err := clientRegistration(ctx, hc, spec, d, stored, redirect, scopes, logger)
	if err != nil {
		ln.Close()
		return nil, err
	}
	// Keep a new registration even if the flow is not completed, so that
	// the next attempt can use it (unless that would drop working tokens).
	if reg.Registered && !stored.usable() && (stored == nil || stored.ClientID != reg.ClientID) {
		if err := store.save(&reg); err != nil {
			logger.Warn("storing the client registration failed", logkey.Error, err)
		}
	}

	verifier := randomString(32)
	state := randomString(16)
	authURL, err := authorizationURL(d, reg.ClientID, redirect, scopes, state, verifier)
	if err != nil {
		ln.Close()
		return nil, err
	}

	cb := serveCallback(ln, state, d)
	defer cb.close()
	if fp.prompt != nil {
		fp.prompt(authURL)
	}
	if fp.openBrowser {
		BrowserOpener(authURL)
	}
	code, err := cb.wait(ctx)
	if err != nil {
		return nil, err
	}
	logger.Debug("authorization code received; exchanging it")
	rec, err := exchangeCode(ctx, hc, reg, redirect, code, verifier)
	if err != nil {
		return nil, err
	}
	if err := store.save(rec); err != nil {
		return nil, fmt.Errorf("storing the tokens: %w", err)
	}
	refusals.Delete(key)
	logger.Info("authorised; tokens stored", "expires", rec.Expiry, "refreshable", rec.RefreshToken != "")
	return rec, nil
}

// exchangeCode trades the authorization code for tokens (with the PKCE
// verifier and the resource), on reg's registration.
func exchangeCode(ctx context.Context, hc *http.Client, reg tokenRecord, redirect, code, verifier string) (*tokenRecord, error) {
	form := url.Values{}
	form.Set("grant_type", "authorization_code")
	form.Set("code", code)
	form.Set("redirect_uri", redirect)
	form.Set("code_verifier", verifier)
	form.Set("resource", reg.Resource)
	tr, err := tokenRequest(ctx, hc, &reg, form, code, verifier)
	if err != nil {
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	rec := reg
	tr.apply(&rec, time.Now())
	return &rec, nil
}

// authorizationURL is the authorization request of the code flow with
// PKCE (S256 of verifier) and the resource parameter: the endpoint's own
// query kept, the flow's parameters added.
func authorizationURL(d *discovery, clientID, redirect string, scopes []string, state, verifier string) (string, error) {
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", clientID)
	q.Set("redirect_uri", redirect)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	q.Set("resource", d.resource)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	au, err := url.Parse(d.meta.AuthorizationEndpoint)
	if err != nil {
		return "", errors.New("authorization_endpoint: not a valid URL")
	}
	for k, vs := range au.Query() { // keep what the endpoint URL has
		if !q.Has(k) {
			q[k] = vs
		}
	}
	au.RawQuery = q.Encode()
	return au.String(), nil
}

// listenCallback listens on 127.0.0.1 for the redirect: on the configured
// port, else on the port of a stored registration (so it can be used
// again) when that is free, else on any free port.
func listenCallback(spec Server, stored *tokenRecord, issuer string) (net.Listener, error) {
	if p := spec.CallbackPort; p > 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return nil, fmt.Errorf("listening for the authorization redirect on 127.0.0.1:%d (oauth.callbackPort): %w "+
				"(a running trunk may be waiting on it for this authorisation: open the URL it logged)", p, err)
		}
		return ln, nil
	}
	if stored != nil && stored.Registered && stored.Issuer == issuer && stored.RedirectURI != "" {
		if u, err := url.Parse(stored.RedirectURI); err == nil && u.Hostname() == "127.0.0.1" && u.Port() != "" {
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", u.Port())); err == nil {
				return ln, nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the authorization redirect: %w", err)
	}
	return ln, nil
}

// clientRegistration returns the record to build on: the client from the
// config, a stored dynamic registration for this issuer and redirect URI,
// or a new dynamic registration.
func clientRegistration(ctx context.Context, hc *http.Client, spec Server, d *discovery, stored *tokenRecord,
	redirect string, scopes []string, logger *slog.Logger) (tokenRecord, error) {
	rec := tokenRecord{
		Server:        canonicalResource(spec.URL),
		Issuer:        d.issuer,
		TokenEndpoint: d.meta.TokenEndpoint,
		Resource:      d.resource,
		RedirectURI:   redirect,
	}
	if spec.ClientID != "" {
		rec.ClientID, rec.ClientSecret = spec.ClientID, spec.ClientSecret
		rec.TokenAuthMethod = "none"
		if rec.ClientSecret != "" {
			rec.TokenAuthMethod = "client_secret_basic"
			if m := d.meta.TokenEndpointAuthMethodsSupported; len(m) > 0 && !contains(m, "client_secret_basic") && contains(m, "client_secret_post") {
				rec.TokenAuthMethod = "client_secret_post"
			}
		}
		return rec, nil
	}
	if stored != nil && stored.Registered && stored.ClientID != "" && stored.Issuer == d.issuer && stored.RedirectURI == redirect {
		rec.ClientID, rec.ClientSecret, rec.TokenAuthMethod, rec.Registered = stored.ClientID, stored.ClientSecret, stored.TokenAuthMethod, true
		logger.Debug("using the stored client registration")
		return rec, nil
	}
	if d.meta.RegistrationEndpoint == "" {
		return rec, fmt.Errorf("the authorization server offers no dynamic client registration: register a client there "+
			"(redirect URI http://127.0.0.1:<port>/callback) and set \"oauth\": {\"clientId\": ..., \"callbackPort\": <port>} for server %q", spec.Name)
	}
	body := map[string]any{
		"client_name":                "mcptrunk",
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if len(scopes) > 0 {
		body["scope"] = strings.Join(scopes, " ")
	}
	enc, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, authHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.meta.RegistrationEndpoint, bytes.NewReader(enc))
	if err != nil {
		return rec, errors.New("building the registration request failed")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return rec, fmt.Errorf("registering with the authorization server: %w", authNetError(err))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, metadataLimit))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(data, &e)
		msg := fmt.Sprintf("registering with the authorization server: HTTP %d", resp.StatusCode)
		if e.Error != "" {
			msg += ": " + logkey.Clip(e.Error)
			if e.Description != "" {
				msg += " (" + logkey.Clip(e.Description) + ")"
			}
		}
		return rec, errors.New(msg)
	}
	var r struct {
		ClientID        string `json:"client_id"`
		ClientSecret    string `json:"client_secret"`
		TokenAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.ClientID == "" {
		return rec, errors.New("registering with the authorization server: the reply holds no client_id")
	}
	rec.ClientID, rec.ClientSecret, rec.Registered = r.ClientID, r.ClientSecret, true
	rec.TokenAuthMethod = r.TokenAuthMethod
	if rec.TokenAuthMethod == "" {
		rec.TokenAuthMethod = "none"
		if rec.ClientSecret != "" {
			rec.TokenAuthMethod = "client_secret_basic"
		}
	}
	logger.Debug("registered with the authorization server")
	return rec, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// randomString returns n random bytes, base64url-encoded (43 characters for
// 32 bytes: a valid PKCE verifier).
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
