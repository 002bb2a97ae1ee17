package signin

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// ServeHTTP answers the sign-in's two routes on the trunk's listener,
// which a browser reaches without the trunk's token:
//
//   - GET /oauth/connect/<id>: the link of the elicitation. Opened once;
//     sets a cookie binding this browser to the flow, and redirects to the
//     authorization server.
//   - GET /oauth/callback: the authorization server's redirect. Its state
//     is taken once (a replay finds nothing), refused when expired or when
//     the browser lacks the flow's cookie (another browser, another
//     subject's state); then the code is exchanged and the token kept for
//     the flow's subject and server.
func (m *Manager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method != http.MethodGet:
		w.Header().Set("Allow", http.MethodGet)
		page(w, http.StatusMethodNotAllowed, "Method not allowed.")
	case strings.HasPrefix(r.URL.Path, connectPath):
		m.connect(w, r, strings.TrimPrefix(r.URL.Path, connectPath))
	case r.URL.Path == callbackPath:
		m.callback(w, r)
	default:
		page(w, http.StatusNotFound, "Not found.")
	}
}

func (m *Manager) connect(w http.ResponseWriter, r *http.Request, id string) {
	// Taken from the store whether started here or not: opened once in
	// every replica.
	shared, terr := m.take(r.Context(), flowName("link", id))
	m.mu.Lock()
	f := m.flows[id]
	now := m.opts.Now()
	if f != nil && f.shared && shared == nil && terr == nil && !now.After(f.expires) { // opened in another replica
		delete(m.flows, id)
		f = nil
	}
	if f == nil && terr != nil { // neither here nor readable there
		m.mu.Unlock()
		m.opts.Logger.Warn("a sign-in link cannot be opened: the state store is unavailable", "error", terr)
		page(w, http.StatusServiceUnavailable, "The trunk's state store is unavailable, so this sign-in link cannot be opened here. Try it again shortly.")
		return
	}
	if f == nil && shared != nil { // started by another replica
		f = shared
		m.states[f.state] = f
	}
	var s *server
	switch {
	case f == nil || f.opened:
		f = nil
	case now.After(f.expires):
		m.forget(f)
		m.mu.Unlock()
		page(w, http.StatusGone, "This sign-in link has expired. Call the server's tool again from your MCP host for a new one.")
		return
	default:
		f.opened = true
		delete(m.flows, id)
		s = m.servers[f.server]
	}
	m.mu.Unlock()
	if f == nil || s == nil {
		page(w, http.StatusNotFound, "This sign-in link is unknown or was already opened. Call the server's tool again from your MCP host for a new one.")
		return
	}
	web, err := m.flowClient(r.Context(), s, f)
	if err != nil {
		page(w, http.StatusBadGateway, "The server's authorization server cannot be reached: "+err.Error())
		return
	}
	target, err := web.AuthURL(f.state, f.verifier)
	if err != nil {
		page(w, http.StatusBadGateway, "The server's authorization server cannot be reached: "+err.Error())
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(f.state), Value: f.binding, Path: "/oauth/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode, Expires: f.expires, MaxAge: int(f.expires.Sub(now) / time.Second)})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, target, http.StatusFound)
}

func (m *Manager) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	// Single use in every replica; a store that does not answer leaves
	// the flow to the replica that holds it.
	shared, terr := m.take(r.Context(), flowName("state", state))
	m.mu.Lock()
	f := m.states[state]
	if f != nil && f.shared && shared == nil && terr == nil && !m.opts.Now().After(f.expires) {
		// Taken in another replica, which completes it: the call waiting
		// here sees its grant (Require).
		m.forget(f)
		f = nil
	} else if f == nil {
		f = shared // started, or its link opened, in another replica
	}
	if f != nil {
		m.forget(f) // single use, whatever comes of it
	}
	var s *server
	if f != nil {
		s = m.servers[f.server]
	}
	m.mu.Unlock()
	if f == nil && terr != nil {
		m.opts.Logger.Warn("a sign-in cannot be completed: the state store is unavailable", "error", terr)
		page(w, http.StatusServiceUnavailable, "The trunk's state store is unavailable, so this sign-in cannot be completed here. Call the server's tool again from your MCP host shortly.")
		return
	}
	if f != nil && s == nil {
		m.finish(f, fmt.Errorf("server %q is no longer in credentials mode \"oauth\"", f.server))
	}
	if f == nil || s == nil {
		page(w, http.StatusBadRequest, "This sign-in is unknown or was already used. Call the server's tool again from your MCP host to start a new one.")
		return
	}
	if m.opts.Now().After(f.expires) {
		m.finish(f, errors.New("the sign-in expired before it was completed"))
		page(w, http.StatusBadRequest, "This sign-in has expired. Call the server's tool again from your MCP host to start a new one.")
		return
	}
	if c, err := r.Cookie(cookieName(state)); err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(f.binding)) != 1 {
		m.opts.Logger.Warn("sign-in refused: its callback came from a browser that did not open its link", "server", f.server, "subject", f.caller.Subject)
		m.finish(f, errors.New("the sign-in was completed in a browser that did not start it; refused"))
		page(w, http.StatusForbidden, "This sign-in was started in another browser, or by someone else, and is refused. Call the server's tool again from your MCP host to start your own.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	web, err := m.flowClient(ctx, s, f)
	if err != nil {
		m.finish(f, err)
		page(w, http.StatusBadGateway, "The server's authorization server cannot be reached: "+err.Error())
		return
	}
	g, err := web.Exchange(ctx, q, f.verifier)
	if err != nil {
		m.opts.Logger.Warn("sign-in failed", "server", f.server, "subject", f.caller.Subject, "error", err)
		m.finish(f, err)
		page(w, http.StatusBadGateway, fmt.Sprintf("Signing in to %s failed: %v", f.server, err))
		return
	}
	if err := m.store(ctx, f.caller.Subject, f.server, g); err != nil {
		m.opts.Logger.Warn("keeping a sign-in failed", "server", f.server, "subject", f.caller.Subject, "error", err)
		m.finish(f, err)
		page(w, http.StatusServiceUnavailable, fmt.Sprintf("Signed in to %s, but the trunk could not keep the sign-in: %v. Try again from your MCP host.", f.server, err))
		return
	}
	m.opts.Logger.Info("signed in", "server", f.server, "subject", f.caller.Subject, "expires", g.Expiry())
	m.finish(f, nil)
	page(w, http.StatusOK, fmt.Sprintf("Signed in to %s. You may close this window and return to your MCP host.", f.server))
}

// flowClient is the client f signs in as: this replica's, found if need
// be, as the client of the registration f began with.
func (m *Manager) flowClient(ctx context.Context, s *server, f *flow) (*oauth.WebClient, error) {
	web, err := s.webClient(ctx, m, f.server)
	if err != nil || len(f.registration) == 0 {
		return web, err
	}
	return web.With(f.registration)
}

// forget removes f from the tables (under m.mu).
func (m *Manager) forget(f *flow) {
	delete(m.flows, f.id)
	delete(m.states, f.state)
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>mcptrunk</title><p>%s</p>\n", html.EscapeString(msg))
}
