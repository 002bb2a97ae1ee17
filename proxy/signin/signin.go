// Package signin is the per-user OAuth sign-in of servers whose
// credentials mode is "oauth": each signed-in caller of the trunk signs in
// to the server's own authorization server, in a browser, and the server
// then sees that caller's own token.
//
// A caller's first call to such a server, with no token for it, is
// answered with a URL elicitation (elicit.go) pointing at the trunk's own
// listener: /oauth/connect/<id> sets a cookie that binds the browser to
// the sign-in and redirects to the authorization server (discovered and
// registered with as "mcptrunk auth" does: upstream/oauth's WebClient),
// with PKCE and a state; /oauth/callback takes the state once, refuses it
// expired, or from a browser without that cookie, exchanges the code and
// keeps the token for (subject, server) (routes.go). Tokens are kept in
// memory only, refreshed before they expire, dropped when the server
// refuses one that cannot be refreshed, and never logged.
//
// The instance that lists a server's tools is no caller's: it uses the
// trunk's own sign-in, the one "mcptrunk auth <server>" stores (Catalog).
package signin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// Paths on the trunk's listener.
const (
	ConnectPath  = "/oauth/connect/"
	CallbackPath = "/oauth/callback"
)

// DefaultFlowTTL is how long a sign-in may take, from the elicitation to
// the callback.
const DefaultFlowTTL = 10 * time.Minute

// Options tune a Manager; the zero value works.
type Options struct {
	Logger  *slog.Logger     // server names and subjects only
	Now     func() time.Time // time.Now when nil
	FlowTTL time.Duration    // DefaultFlowTTL when 0
}

// Manager holds the sign-ins: the servers in oauth mode, the flows under
// way, and the tokens got. Safe for concurrent use; an http.Handler for
// the two routes.
type Manager struct {
	opts    Options
	flights singleflight.Group // one refresh or discovery at a time per key

	mu      sync.Mutex
	base    string                             // the trunk's public origin
	servers map[string]*server                 // by id: those in oauth mode
	flows   map[string]*flow                   // by connect id
	states  map[string]*flow                   // by state
	grants  map[string]map[string]*oauth.Grant // subject -> server -> its grant
}

type server struct {
	spec   config.Spec
	web    *oauth.WebClient // once discovered
	source *oauth.Source    // the trunk's own sign-in, for the listing instance
}

// New returns a Manager with no servers; Configure gives it the config's.
func New(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FlowTTL <= 0 {
		opts.FlowTTL = DefaultFlowTTL
	}
	return &Manager{opts: opts, servers: map[string]*server{}, flows: map[string]*flow{}, states: map[string]*flow{}, grants: map[string]map[string]*oauth.Grant{}}
}

// Configure takes a config (at start and at each reload): its servers in
// oauth mode, and the trunk's public origin (trunk.http.auth.resource's).
// A server whose entry changed or went away loses its tokens.
func (m *Manager) Configure(cfg *config.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	base := ""
	if a := cfg.Trunk.HTTP.Auth; a != nil {
		if u, err := url.Parse(a.Resource); err == nil && u.Host != "" {
			base = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		}
	}
	if base != m.base { // the redirect URI changed: every client anew
		m.base, m.servers = base, map[string]*server{}
	}
	next := map[string]*server{}
	for _, spec := range cfg.Servers {
		id, err := naming.ServerID(spec.Name)
		if err != nil || spec.Credentials.Mode != config.CredentialsOAuth || spec.Invalid != nil {
			continue
		}
		if old, ok := m.servers[id]; ok && old.spec.Equal(spec) {
			next[id] = old
			continue
		}
		next[id] = &server{spec: spec, source: oauth.NewSource(upstream.OAuthServer(spec), id, m.opts.Logger, nil)}
	}
	for id := range m.servers {
		if next[id] != m.servers[id] {
			for _, byServer := range m.grants {
				delete(byServer, id)
			}
		}
	}
	m.servers = next
}

// Has reports whether server is in oauth mode.
func (m *Manager) Has(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[id] != nil
}

// NeedSignInError says a caller has no token for a server (never signed
// in, or the grant was revoked).
type NeedSignInError struct{ Server, Subject string }

func (e *NeedSignInError) Error() string {
	return fmt.Sprintf("server %q: %q has not signed in to it, or its sign-in was revoked; the next call to it asks to sign in", e.Server, e.Subject)
}

// Authorization is the Authorization header of subject's requests to
// server: its token, refreshed when it is about to expire. refused is the
// value the server has just refused ("" for none): that token is dropped,
// and refreshed if it can be, else the caller must sign in again.
func (m *Manager) Authorization(ctx context.Context, subject, id, refused string) (string, error) {
	s, g := m.grant(subject, id)
	if s == nil {
		return "", fmt.Errorf("server %q is not in credentials mode \"oauth\"", id)
	}
	if g == nil {
		return "", &NeedSignInError{Server: id, Subject: subject}
	}
	dropped := refused != "" && refused == g.Authorization()
	if !dropped && !g.NeedsRefresh(m.opts.Now()) {
		return g.Authorization(), nil
	}
	v, err, _ := m.flights.Do("refresh\x00"+subject+"\x00"+id, func() (any, error) {
		if _, cur := m.grant(subject, id); cur != g {
			return cur, nil // refreshed (or dropped) meanwhile
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		fresh, err := s.webClient(ctx, m, id)
		if err == nil {
			var next *oauth.Grant
			if next, err = fresh.Refresh(ctx, g); err == nil {
				m.store(subject, id, next)
				m.opts.Logger.Debug("token refreshed", "server", id, "subject", subject)
				return next, nil
			}
		}
		if dropped || oauth.Permanent(err) || g.Expired(m.opts.Now()) {
			m.drop(subject, id, g)
			m.opts.Logger.Info("sign-in dropped: the server refused the token or its refresh failed", "server", id, "subject", subject, "error", err)
			return (*oauth.Grant)(nil), nil
		}
		m.opts.Logger.Debug("refreshing ahead of expiry failed; using the token while it lasts", "server", id, "subject", subject, "error", err)
		return g, nil
	})
	if err != nil {
		return "", err
	}
	if next := v.(*oauth.Grant); next != nil {
		return next.Authorization(), nil
	}
	return "", &NeedSignInError{Server: id, Subject: subject}
}

// Catalog is the Authorization header of the instance every caller
// shares, which only lists the server's tools: the trunk's own sign-in
// ("mcptrunk auth <server>"), refreshed by upstream/oauth.
func (m *Manager) Catalog(ctx context.Context, id, refused string) (string, error) {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil || s.source == nil {
		return "", fmt.Errorf("server %q is not in credentials mode \"oauth\"", id)
	}
	if refused != "" {
		if _, err := s.source.Rejected(ctx, strings.TrimPrefix(refused, "Bearer "), nil, false); err != nil {
			return "", err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.spec.URL, nil)
	if err != nil {
		return "", err
	}
	tok, err := s.source.Apply(req)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", &oauth.AuthRequiredError{Server: id, Reason: "the trunk lists this server's tools with its own sign-in; each caller's calls carry the caller's"}
	}
	return req.Header.Get("Authorization"), nil
}

// Holding reports how many subjects have tokens kept: for tests and
// status, never which.
func (m *Manager) Holding() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, byServer := range m.grants {
		if len(byServer) > 0 {
			n++
		}
	}
	return n
}

func (m *Manager) grant(subject, id string) (*server, *oauth.Grant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[id], m.grants[subject][id]
}

func (m *Manager) store(subject, id string, g *oauth.Grant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.grants[subject] == nil {
		m.grants[subject] = map[string]*oauth.Grant{}
	}
	m.grants[subject][id] = g
}

// drop removes subject's grant for id if it is still g.
func (m *Manager) drop(subject, id string, g *oauth.Grant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.grants[subject][id] == g {
		delete(m.grants[subject], id)
	}
}

// webClient is the trunk as a client of the server's authorization
// server, found (and registered with) at first use.
func (s *server) webClient(ctx context.Context, m *Manager, id string) (*oauth.WebClient, error) {
	m.mu.Lock()
	web, base := s.web, m.base
	m.mu.Unlock()
	if web != nil {
		return web, nil
	}
	if base == "" {
		return nil, fmt.Errorf("server %q: sign-in needs trunk.http.auth.resource, the trunk's public URL, for its callback", id)
	}
	v, err, _ := m.flights.Do("discover\x00"+id, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		srv := upstream.OAuthServer(s.spec)
		srv.ClientID, srv.ClientSecret, srv.Scopes = s.spec.Credentials.ClientID, s.spec.Credentials.ClientSecret, s.spec.Credentials.Scopes
		return oauth.NewWebClient(ctx, srv, base+CallbackPath, m.opts.Logger.With("server", id))
	})
	if err != nil {
		return nil, fmt.Errorf("server %q: finding where to sign in: %w", id, err)
	}
	m.mu.Lock()
	s.web = v.(*oauth.WebClient)
	m.mu.Unlock()
	return s.web, nil
}
