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
// keeps the token for (subject, server) (routes.go). A flow is written to
// the store too, so that another replica can complete it (flow.go).
// Tokens are kept in the trunk's state store (trunk.state: in memory
// unless configured, sealed where it is a file or Redis), read from it at
// each use so that a restart or another replica finds them, refreshed
// before they expire, deleted when the server refuses one that cannot be
// refreshed, and never logged.
//
// The instance that lists a server's tools is no caller's: it uses the
// trunk's own sign-in, the one "mcptrunk auth <server>" stores (Catalog).
package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// Paths on the trunk's listener.
const (
	connectPath  = "/oauth/connect/"
	callbackPath = "/oauth/callback"
)

// defaultFlowTTL is how long a sign-in may take, from the elicitation to
// the callback.
const defaultFlowTTL = 10 * time.Minute

// Options tune a Manager; the zero value works.
type Options struct {
	Logger  *slog.Logger     // server names and subjects only
	Now     func() time.Time // time.Now when nil
	FlowTTL time.Duration    // 10 minutes when 0
	// Store keeps the grants; nil keeps them in memory. One that cannot
	// seal (a file or Redis without trunk.state.keyFile) is not used for
	// them: they are kept in memory, with a warning.
	Store *statestore.Store
}

// grantKeep is how long a grant with a refresh token is kept past its
// access token's expiry: the usual life of a refresh token (Hydra's,
// Keycloak's offline default), after which the caller signs in again.
// Each refresh starts it afresh.
const grantKeep = 30 * 24 * time.Hour

// Manager holds the sign-ins: the servers in oauth mode, the flows under
// way, and the tokens got. Safe for concurrent use; an http.Handler for
// the two routes.
type Manager struct {
	opts    Options
	flights singleflight.Group // one refresh or discovery at a time per key

	mu      sync.Mutex
	base    string                          // the trunk's public origin
	servers map[string]*server              // by id: those in oauth mode
	flows   map[string]*flow                // by connect id
	states  map[string]*flow                // by state
	held    map[string]map[string]time.Time // subject -> server -> until when this process stored its grant
	stores  int                             // since held was last pruned
}

type server struct {
	spec   config.Spec
	web    *oauth.WebClient // once discovered
	source *oauth.Source    // the trunk's own sign-in, for the listing instance
	// entry names what a grant was got for (the server's URL, issuer,
	// client and scopes): a changed entry finds none of the old grants.
	entry string
}

// entryOf is a short digest of what in spec a grant depends on, the same
// in every replica with the same config. Not the client secret: the names
// are seen by whatever else uses the Redis, and a fast digest of a weak
// secret can be guessed offline; a grant is the client id's whatever its
// secret.
func entryOf(spec config.Spec) string {
	c := spec.Credentials
	sum := sha256.Sum256([]byte(strings.Join(append([]string{spec.URL, c.Issuer, c.ClientID}, c.Scopes...), "\x00")))
	return hex.EncodeToString(sum[:8])
}

// clientName is the store's name of the client the trunk registered at
// server id's authorization server for the callback at base.
func clientName(id, entry, base string) string {
	sum := sha256.Sum256([]byte(base))
	return "signin-client/" + id + "/" + entry + "/" + hex.EncodeToString(sum[:8])
}

// grantName is the store's name of subject's grant for server id: the
// subject is hashed, so that the store's names say nothing of who signed
// in.
func grantName(id, entry, subject string) string {
	return "signin/" + id + "/" + entry + "/" + statestore.Subject(subject)
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
		opts.FlowTTL = defaultFlowTTL
	}
	if opts.Store == nil || !opts.Store.CanSeal() {
		if opts.Store != nil {
			opts.Logger.Warn("trunk.state has no keyFile: callers' sign-ins are kept in memory, and a restart asks them to sign in again", "store", opts.Store.Info().Kind)
		}
		opts.Store = statestore.New(statestore.NewMemory(opts.Now), nil, statestore.Options{Now: opts.Now})
	}
	return &Manager{opts: opts, servers: map[string]*server{}, flows: map[string]*flow{}, states: map[string]*flow{}, held: map[string]map[string]time.Time{}}
}

// Configure takes a config (at start and at each reload): its servers in
// oauth mode, and the trunk's public origin (trunk.http.auth.resource's).
// A server whose entry changed or went away loses its tokens.
func (m *Manager) Configure(cfg *config.Config) {
	if gone := m.configure(cfg); len(gone) > 0 {
		m.deleteAll(gone) // not under m.mu: a store over the network may be slow
	}
}

// configure takes cfg and returns the names of the grants this process
// stored for servers whose entry changed or went away.
func (m *Manager) configure(cfg *config.Config) (gone []string) {
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
		next[id] = &server{spec: spec, source: oauth.NewSource(upstream.OAuthServer(spec), id, m.opts.Logger, nil), entry: entryOf(spec)}
	}
	for id, old := range m.servers {
		if n := next[id]; n == nil || n.entry != old.entry {
			for subject, byServer := range m.held {
				if _, ok := byServer[id]; ok {
					gone = append(gone, grantName(id, old.entry, subject))
					delete(byServer, id)
				}
			}
		}
	}
	m.servers = next
	return gone
}

// deleteAll deletes the grants named; what it cannot delete expires.
func (m *Manager) deleteAll(names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range names {
		if err := m.opts.Store.Delete(ctx, n); err != nil {
			m.opts.Logger.Debug("deleting the sign-ins of a server whose entry changed failed; they expire", "error", err)
			return
		}
	}
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
	s, g, err := m.grant(ctx, subject, id)
	if s == nil {
		return "", fmt.Errorf("server %q is not in credentials mode \"oauth\"", id)
	}
	if err != nil {
		return "", err
	}
	if g == nil {
		return "", &NeedSignInError{Server: id, Subject: subject}
	}
	dropped := refused != "" && refused == g.Authorization()
	if !dropped && !g.NeedsRefresh(m.opts.Now()) {
		return g.Authorization(), nil
	}
	v, err, _ := m.flights.Do("refresh\x00"+subject+"\x00"+id, func() (any, error) {
		// Not the first caller's ctx: every waiter shares what comes of it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, cur, err := m.grant(ctx, subject, id); err != nil || !same(cur, g) {
			return cur, err // refreshed (or dropped) meanwhile, here or by another replica
		}
		fresh, err := s.webClient(ctx, m, id)
		if err == nil {
			var next *oauth.Grant
			if next, err = fresh.Refresh(ctx, g); err == nil {
				if err := m.store(ctx, subject, id, next); err != nil {
					m.opts.Logger.Warn("keeping a refreshed token failed; it is used for this call", "server", id, "subject", subject, "error", err)
				}
				m.opts.Logger.Debug("token refreshed", "server", id, "subject", subject)
				return next, nil
			}
		}
		if _, cur, lerr := m.grant(ctx, subject, id); lerr == nil && cur != nil && !same(cur, g) {
			return cur, nil // another replica refreshed it first (its refresh token may be single-use)
		}
		if dropped || oauth.Permanent(err) || g.Expired(m.opts.Now()) {
			m.drop(ctx, subject, id)
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

// same reports whether a and b hold the same access token.
func same(a, b *oauth.Grant) bool {
	return a != nil && b != nil && a.Authorization() == b.Authorization()
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

// holding reports how many subjects this process stored tokens for that
// have not expired: for tests and status, never which.
func (m *Manager) holding() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.opts.Now()
	n := 0
	for _, byServer := range m.held {
		for _, until := range byServer {
			if until.IsZero() || now.Before(until) {
				n++
				break
			}
		}
	}
	return n
}

// grant is the server id in oauth mode (nil if it is not) and subject's
// grant for it from the store (nil if there is none); err when the store
// did not answer or holds what cannot be read.
func (m *Manager) grant(ctx context.Context, subject, id string) (*server, *oauth.Grant, error) {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil {
		return nil, nil, nil
	}
	b, err := m.opts.Store.Get(ctx, grantName(id, s.entry, subject), true)
	if errors.Is(err, statestore.ErrNotFound) {
		return s, nil, nil
	}
	if err != nil {
		return s, nil, fmt.Errorf("server %q: reading %q's sign-in: %w", id, subject, err)
	}
	g := &oauth.Grant{}
	if err := g.UnmarshalBinary(b); err != nil {
		return s, nil, fmt.Errorf("server %q: %q's stored sign-in cannot be read: %w", id, subject, err)
	}
	return s, g, nil
}

// store keeps g as subject's grant for id until it is of no more use: its
// access token's expiry, or grantKeep past it when it can be refreshed.
func (m *Manager) store(ctx context.Context, subject, id string, g *oauth.Grant) error {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("server %q is no longer in credentials mode \"oauth\"", id)
	}
	until := g.Expiry()
	if g.Refreshable() {
		if until.IsZero() {
			until = m.opts.Now()
		}
		until = until.Add(grantKeep)
	}
	b, err := g.MarshalBinary()
	if err != nil {
		return err
	}
	if err := m.opts.Store.Put(ctx, grantName(id, s.entry, subject), b, statestore.Put{Expires: until, Seal: true}); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held[subject] == nil {
		m.held[subject] = map[string]time.Time{}
	}
	m.held[subject][id] = until
	if m.stores++; m.stores >= len(m.held)/2 {
		m.stores = 0
		pruneHeld(m.held, m.opts.Now())
	}
	return nil
}

// pruneHeld drops from held the entries past their end, and the subjects
// left with none, so that it grows with the callers holding tokens rather
// than with every caller seen. Run once per len(held)/2 stores (held
// grows by one subject a store at most), it costs each store O(1).
func pruneHeld(held map[string]map[string]time.Time, now time.Time) {
	for subject, byServer := range held {
		for id, until := range byServer {
			if expired(until, now) {
				delete(byServer, id)
			}
		}
		if len(byServer) == 0 {
			delete(held, subject)
		}
	}
}

// expired reports whether until (zero: never) has passed.
func expired(until, now time.Time) bool { return !until.IsZero() && !now.Before(until) }

// drop deletes subject's grant for id.
func (m *Manager) drop(ctx context.Context, subject, id string) {
	m.mu.Lock()
	s := m.servers[id]
	delete(m.held[subject], id)
	if len(m.held[subject]) == 0 {
		delete(m.held, subject)
	}
	m.mu.Unlock()
	if s == nil {
		return
	}
	if err := m.opts.Store.Delete(ctx, grantName(id, s.entry, subject)); err != nil {
		m.opts.Logger.Warn("deleting a refused sign-in failed; it is deleted when its refresh fails again or it expires", "server", id, "subject", subject, "error", err)
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
		// The replicas of a trunk register one client: the first one's,
		// kept in the store.
		name := clientName(id, s.entry, base)
		stored, err := m.opts.Store.Get(ctx, name, true)
		if err != nil && !errors.Is(err, statestore.ErrNotFound) {
			m.opts.Logger.Debug("reading the shared client registration failed; registering anew", "server", id, "error", err)
		}
		web, err := oauth.NewWebClientReusing(ctx, srv, base+callbackPath, m.opts.Logger.With("server", id), stored)
		if err != nil {
			return nil, err
		}
		if reg, rerr := web.Registration(); rerr == nil && string(reg) != string(stored) {
			if perr := m.opts.Store.Put(ctx, name, reg, statestore.Put{Seal: true}); perr != nil {
				m.opts.Logger.Debug("sharing the client registration failed", "server", id, "error", perr)
			}
		}
		return web, nil
	})
	if err != nil {
		return nil, fmt.Errorf("server %q: finding where to sign in: %w", id, err)
	}
	m.mu.Lock()
	s.web = v.(*oauth.WebClient)
	m.mu.Unlock()
	return s.web, nil
}
