package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// The token endpoint: exchanging a code or a refresh token, and what its
// answers and errors mean.

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1, §5.2).
type tokenResponse struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"`
	RefreshToken string    `json:"refresh_token"`
	ExpiresIn    flexInt64 `json:"expires_in"`
	Scope        string    `json:"scope"`
	Error        string    `json:"error"`
	Description  string    `json:"error_description"`
}

// flexInt64 is a number that some servers send as a string.
type flexInt64 int64

func (n *flexInt64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return err
		}
		v = int64(f)
	}
	*n = flexInt64(v)
	return nil
}

// apply puts the tokens into rec. A refresh reply without a refresh token
// keeps the old one.
func (tr *tokenResponse) apply(rec *tokenRecord, now time.Time) {
	rec.AccessToken = tr.AccessToken
	rec.TokenType = tr.TokenType
	if tr.RefreshToken != "" {
		rec.RefreshToken = tr.RefreshToken
	}
	if tr.Scope != "" {
		rec.Scope = tr.Scope
	}
	rec.Obtained = now
	rec.Expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		rec.Expiry = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
}

// tokenError is a token endpoint's refusal, or an unusable reply.
type tokenError struct {
	status int
	code   string // the OAuth error code
	desc   string
}

func (e *tokenError) Error() string {
	msg := fmt.Sprintf("the authorization server answered HTTP %d", e.status)
	if e.code != "" {
		msg = "the authorization server refused: " + e.code
		if e.desc != "" {
			msg += " (" + e.desc + ")"
		}
	}
	return msg
}

// isPermanentTokenError reports whether the authorization server refused
// the grant itself (a 4xx: revoked or expired refresh token, unknown
// client), as opposed to failing or being out of reach.
func isPermanentTokenError(err error) bool {
	var te *tokenError
	return errors.As(err, &te) && te.status >= 400 && te.status < 500
}

func tokenErrorCode(err error) string {
	var te *tokenError
	if errors.As(err, &te) {
		if te.code != "" {
			return te.code
		}
		return fmt.Sprintf("HTTP %d", te.status)
	}
	return err.Error()
}

// refreshGrant uses rec's refresh token and returns the updated record.
func refreshGrant(ctx context.Context, hc *http.Client, rec *tokenRecord) (*tokenRecord, error) {
	if rec.TokenEndpoint == "" || rec.ClientID == "" {
		return nil, &tokenError{status: http.StatusBadRequest, code: "incomplete stored registration"}
	}
	form := url.Values{}
	form.Set("grant_type", "refresh_token")
	form.Set("refresh_token", rec.RefreshToken)
	if rec.Resource != "" {
		form.Set("resource", rec.Resource)
	}
	tr, err := tokenRequest(ctx, hc, rec, form, rec.RefreshToken)
	if err != nil {
		return nil, err
	}
	fresh := *rec
	tr.apply(&fresh, time.Now())
	return &fresh, nil
}

// tokenRequest POSTs form to the token endpoint with the client's
// authentication. Nothing of the request or the reply that could be a
// secret (the extra values given, the client secret, the tokens) is quoted
// in an error.
func tokenRequest(ctx context.Context, hc *http.Client, reg *tokenRecord, form url.Values, secrets ...string) (*tokenResponse, error) {
	if err := checkEndpoint("token_endpoint", reg.TokenEndpoint); err != nil {
		return nil, err
	}
	useBasic := reg.ClientSecret != "" && reg.TokenAuthMethod != "client_secret_post"
	if !useBasic {
		form.Set("client_id", reg.ClientID)
		if reg.ClientSecret != "" {
			form.Set("client_secret", reg.ClientSecret)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, authHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, reg.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, errors.New("building the token request failed")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if useBasic {
		req.SetBasicAuth(url.QueryEscape(reg.ClientID), url.QueryEscape(reg.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, authNetError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, metadataLimit))
	if err != nil {
		return nil, fmt.Errorf("reading the token response: %v", err)
	}
	var tr tokenResponse
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/x-www-form-urlencoded" || mt == "text/plain" {
		// GitHub-style form replies.
		if v, perr := url.ParseQuery(string(data)); perr == nil {
			tr.AccessToken, tr.TokenType, tr.RefreshToken = v.Get("access_token"), v.Get("token_type"), v.Get("refresh_token")
			tr.Scope, tr.Error, tr.Description = v.Get("scope"), v.Get("error"), v.Get("error_description")
			_ = tr.ExpiresIn.UnmarshalJSON([]byte(v.Get("expires_in")))
		}
	} else if jerr := json.Unmarshal(data, &tr); jerr != nil && resp.StatusCode == http.StatusOK {
		return nil, errors.New("the token response is not valid JSON")
	}
	scrub := func(s string) string {
		for _, v := range append(secrets, reg.ClientSecret, tr.AccessToken, tr.RefreshToken) {
			if len(v) >= 4 {
				s = strings.ReplaceAll(s, v, "[redacted]")
			}
		}
		return logkey.Clip(s)
	}
	if resp.StatusCode != http.StatusOK || tr.Error != "" || tr.AccessToken == "" {
		status := resp.StatusCode
		if status == http.StatusOK {
			status = http.StatusBadRequest // an error in a 200, or no token
		}
		code := scrub(tr.Error)
		if code == "" && resp.StatusCode == http.StatusOK {
			code = "no access_token in the reply"
		}
		return nil, &tokenError{status: status, code: code, desc: scrub(tr.Description)}
	}
	if tr.TokenType == "" {
		tr.TokenType = "Bearer"
	}
	if !strings.EqualFold(tr.TokenType, "Bearer") {
		return nil, fmt.Errorf("the authorization server issued a %q token; only Bearer tokens are supported", logkey.Clip(tr.TokenType))
	}
	return &tr, nil
}
