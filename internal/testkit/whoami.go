package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
)

// Whoami is a streamable HTTP MCP server (go-sdk's) that is a resource
// server of an issuer: every request must carry an access token of that
// issuer for its audience, checked as the trunk checks its own
// (accesstoken.Verifier), and its tool whoami answers the token's sub and
// aud as JSON text ({"sub": ..., "aud": [...]}). It records the sub and
// aud of every bearer token it was sent, accepted or not, so a test can
// show that a token meant for someone else (the trunk) never reached it.
type Whoami struct {
	URL string

	mu      sync.Mutex
	seen    []Seen
	revoked map[string]bool // subjects whose tokens are refused
}

// Seen is a token the server was sent: its claims as read, unchecked.
type Seen struct {
	Subject  string
	Audience []string
	Accepted bool
}

// StartWhoami starts the server until the test ends.
func StartWhoami(t testing.TB, issuer, audience string) *Whoami {
	return startWhoami(t, issuer, func(string) string { return audience }, false)
}

// StartWhoamiSignIn starts a server whose callers sign in to it
// themselves: its audience is its own URL, and it publishes protected
// resource metadata (RFC 9728) naming issuer, so that a client finds
// where to sign in as "mcptrunk auth" does.
func StartWhoamiSignIn(t testing.TB, issuer string) *Whoami {
	return startWhoami(t, issuer, func(url string) string { return url }, true)
}

func startWhoami(t testing.TB, issuer string, audience func(url string) string, metadata bool) *Whoami {
	w := &Whoami{revoked: map[string]bool{}}
	hs := httptest.NewUnstartedServer(nil)
	w.URL = "http://" + hs.Listener.Addr().String()
	aud := audience(w.URL)
	v := accesstoken.New(accesstoken.Config{Issuer: issuer, Resource: aud})
	srv := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "who the bearer token says the caller is"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			info := req.Extra.TokenInfo
			if info == nil {
				return nil, nil, fmt.Errorf("no token")
			}
			text, _ := json.Marshal(map[string]any{"sub": info.UserID, "aud": info.Extra["aud"]})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil, nil
		})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		id, err := v.Verify(ctx, token)
		if err == nil && w.isRevoked(id.Subject) {
			err = fmt.Errorf("the token of %q is revoked", id.Subject)
		}
		w.note(token, err == nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		exp, _ := id.Claims["exp"].(float64)
		info := &auth.TokenInfo{UserID: id.Subject, Scopes: id.Scopes, Extra: map[string]any{"aud": id.Claims["aud"]}}
		info.Expiration = unixTime(exp)
		return info, nil
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	var opts *auth.RequireBearerTokenOptions
	if metadata {
		const prm = "/.well-known/oauth-protected-resource"
		opts = &auth.RequireBearerTokenOptions{ResourceMetadataURL: w.URL + prm}
		mux.HandleFunc("GET "+prm, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(map[string]any{"resource": aud, "authorization_servers": []string{issuer}})
		})
	}
	mux.Handle("/", auth.RequireBearerToken(verify, opts)(h))
	hs.Config.Handler = mux
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		// A session whose client could not end it (its token revoked, so
		// its DELETE is refused too) would outlive the test.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	return w
}

// Revoke makes the server refuse (401) every token of sub from now on,
// as a server whose user withdrew the grant does.
func (w *Whoami) Revoke(sub string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.revoked[sub] = true
}

func (w *Whoami) isRevoked(sub string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.revoked[sub]
}

func (w *Whoami) note(raw string, accepted bool) {
	s := Seen{Accepted: accepted}
	if tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256}); err == nil {
		var c jwt.Claims
		if tok.UnsafeClaimsWithoutVerification(&c) == nil {
			s.Subject, s.Audience = c.Subject, c.Audience
		}
	}
	w.mu.Lock()
	w.seen = append(w.seen, s)
	w.mu.Unlock()
}

// Seen returns every token sent so far, oldest first.
func (w *Whoami) Seen() []Seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// SawAudience reports whether any token sent named aud among its
// audiences.
func (w *Whoami) SawAudience(aud string) bool {
	for _, s := range w.Seen() {
		if slices.Contains(s.Audience, aud) {
			return true
		}
	}
	return false
}

// WhoamiAnswer reads a whoami result's text.
func WhoamiAnswer(text string) (sub string, aud []string, err error) {
	var v struct {
		Sub string `json:"sub"`
		Aud any    `json:"aud"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &v); err != nil {
		return "", nil, err
	}
	switch a := v.Aud.(type) {
	case string:
		aud = []string{a}
	case []any:
		for _, x := range a {
			s, _ := x.(string)
			aud = append(aud, s)
		}
	}
	return v.Sub, aud, nil
}

func unixTime(sec float64) time.Time { return time.Unix(int64(sec), 0) }
