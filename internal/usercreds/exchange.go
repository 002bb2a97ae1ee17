package usercreds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/config"
)

// RFC 8693's grant and token types.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// defaultTTL is how long a token whose response gives no expires_in is
// used: short, since the issuer did not say.
const defaultTTL = 5 * time.Minute

// Token is an access token got for one server.
type Token struct {
	Value   string
	Expires time.Time
	renew   time.Time // when to get the next one: before it expires
}

// usable reports whether the token is to be sent at now rather than
// replaced.
func (t Token) usable(now time.Time) bool { return t.Value != "" && now.Before(t.renew) }

// Error is the token endpoint's refusal (RFC 6749 section 5.2): its error
// code, never a token.
type Error struct {
	Server string
	Grant  string // "token exchange" or "client credentials"
	Code   string // invalid_grant, invalid_client, invalid_target, ...
	Status int
}

func (e *Error) Error() string {
	return fmt.Sprintf("server %q: the issuer refused the %s: %s (HTTP %d)", e.Server, e.Grant, e.Code, e.Status)
}

// Exchanger gets tokens for one server at its issuer's token endpoint,
// authenticating as the trunk's own client.
type Exchanger struct {
	server string
	cfg    config.Credentials
	client *http.Client
	now    func() time.Time

	mu       sync.Mutex
	endpoint string // the token endpoint, once known
}

// NewExchanger returns the exchanger of server; the issuer is not
// contacted until a token is needed.
func NewExchanger(server string, cfg config.Credentials, client *http.Client, now func() time.Time) *Exchanger {
	if client == nil {
		client = http.DefaultClient
	}
	if now == nil {
		now = time.Now
	}
	return &Exchanger{server: server, cfg: cfg, client: client, now: now, endpoint: cfg.TokenEndpoint}
}

// Exchange trades subjectToken, the caller's access token for the trunk,
// for a token for the server with the same subject (RFC 8693).
func (e *Exchanger) Exchange(ctx context.Context, subjectToken string) (Token, error) {
	if subjectToken == "" {
		return Token{}, fmt.Errorf("server %q: no access token of the caller to exchange", e.server)
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subjectToken},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
	}
	return e.token(ctx, "token exchange", form)
}

// ClientToken is the trunk's own token for the server (the client
// credentials grant): the instance that lists the server's catalog, which
// is no caller's, carries it.
func (e *Exchanger) ClientToken(ctx context.Context) (Token, error) {
	return e.token(ctx, "client credentials", url.Values{"grant_type": {"client_credentials"}})
}

func (e *Exchanger) token(ctx context.Context, grant string, form url.Values) (Token, error) {
	endpoint, err := e.tokenEndpoint(ctx)
	if err != nil {
		return Token{}, err
	}
	if e.cfg.Audience != "" {
		form.Set("audience", e.cfg.Audience)
	}
	if e.cfg.Resource != "" {
		form.Set("resource", e.cfg.Resource)
	}
	if len(e.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(e.cfg.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return Token{}, fmt.Errorf("server %q: the token endpoint: %v", e.server, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// client_secret_basic (RFC 6749 section 2.3.1): both form-encoded.
	req.SetBasicAuth(url.QueryEscape(e.cfg.ClientID), url.QueryEscape(e.cfg.ClientSecret))
	sent := e.now()
	resp, err := e.client.Do(req)
	if err != nil {
		// The URL names only the issuer's endpoint; the error never
		// carries the form.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Token{}, fmt.Errorf("server %q: the %s at the issuer failed: %w", e.server, grant, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	decodeErr := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	if resp.StatusCode != http.StatusOK {
		code := body.Error
		if code == "" {
			code = "no error code"
		}
		return Token{}, &Error{Server: e.server, Grant: grant, Code: code, Status: resp.StatusCode}
	}
	if decodeErr != nil || body.AccessToken == "" {
		return Token{}, fmt.Errorf("server %q: the issuer's answer to the %s has no access_token", e.server, grant)
	}
	if body.TokenType != "" && !strings.EqualFold(body.TokenType, "bearer") && !strings.EqualFold(body.TokenType, "N_A") {
		return Token{}, fmt.Errorf("server %q: the issuer gave a %q token; only bearer tokens can be sent", e.server, body.TokenType)
	}
	ttl := defaultTTL
	if body.ExpiresIn > 0 {
		ttl = time.Duration(body.ExpiresIn) * time.Second
	}
	// Renewed with a margin of a tenth of its life, at most a minute, so
	// that no request carries a token about to expire.
	margin := min(ttl/10, time.Minute)
	return Token{Value: body.AccessToken, Expires: sent.Add(ttl), renew: sent.Add(ttl - margin)}, nil
}

// tokenEndpoint is the configured endpoint, else the one the issuer's
// metadata names (read once).
func (e *Exchanger) tokenEndpoint(ctx context.Context) (string, error) {
	e.mu.Lock()
	ep := e.endpoint
	e.mu.Unlock()
	if ep != "" {
		return ep, nil
	}
	md, err := accesstoken.Discover(ctx, e.client, e.cfg.Issuer)
	if err != nil {
		return "", fmt.Errorf("server %q: finding the token endpoint: %w", e.server, err)
	}
	if md.TokenEndpoint == "" {
		return "", fmt.Errorf("server %q: the issuer's metadata names no token_endpoint; set credentials.tokenEndpoint", e.server)
	}
	e.mu.Lock()
	e.endpoint = md.TokenEndpoint
	e.mu.Unlock()
	return md.TokenEndpoint, nil
}
