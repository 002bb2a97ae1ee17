package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// Caller is who asks for a server in oauth mode, as the trunk knows it:
// the subject its access token proved, its session, what its host
// declared, and how to reach that host.
type Caller struct {
	Subject string
	Session string // the HTTP session id; "" for a stateless request
	// Elicitation is the host's elicitation capability as declared
	// (nil: none); "url" in it means the host opens URLs for servers.
	Elicitation json.RawMessage
	Stateless   bool // a 2026-07-28 request: no request to the host mid-call
	// Ask sends the host a request (elicitation/create); Notify a
	// notification (notifications/elicitation/complete).
	Ask    func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	Notify func(method string, params json.RawMessage) error
}

// flow is one sign-in under way: made for a caller and a server, its
// connect link opened once, its state taken once by the callback.
type flow struct {
	id       string // in the connect URL; also the elicitation id
	state    string // sent to the authorization server
	verifier string // PKCE
	binding  string // the cookie the connect link sets, which the callback must bring
	server   string
	caller   Caller
	expires  time.Time
	opened   bool
	done     chan struct{} // closed when the callback ends it
	err      error         // why it failed, once done
	once     sync.Once     // guards done
	// registration is the client the flow signs in as
	// (oauth.WebClient.Registration): the replica that completes it may
	// have registered another.
	registration []byte
	// shared: the flow is in the store, whose records decide that its
	// link opens and its state is taken once across replicas; remote: it
	// was started by another replica (its caller is not here).
	shared, remote bool
}

// sharedFlow is a flow as the store keeps it for the other replicas
// (sealed: it holds the verifier and the binding), under its id until the
// link is opened and under its state until the callback.
type sharedFlow struct {
	ID, State, Verifier, Binding, Server, Subject string
	Expires                                       time.Time
	Registration                                  []byte
}

// flowName is the store's name of a flow by key ("link" with its id,
// "state" with its state): hashed, so the names give neither away.
func flowName(key, v string) string {
	sum := sha256.Sum256([]byte(v))
	return "signin-flow/" + key + "/" + hex.EncodeToString(sum[:16])
}

// share writes f to the store, so that the replica its browser reaches
// can complete it; a store that fails leaves it to this replica.
func (m *Manager) share(ctx context.Context, f *flow) {
	b, _ := json.Marshal(sharedFlow{ID: f.id, State: f.state, Verifier: f.verifier, Binding: f.binding, Server: f.server,
		Subject: f.caller.Subject, Expires: f.expires, Registration: f.registration})
	for _, n := range []string{flowName("link", f.id), flowName("state", f.state)} {
		if err := m.opts.Store.Put(ctx, n, b, statestore.Put{Expires: f.expires, Seal: true}); err != nil {
			m.opts.Logger.Debug("sharing a sign-in with the other replicas failed; it completes here only", "server", f.server, "subject", f.caller.Subject, "error", err)
			return
		}
	}
	f.shared = true
}

// take reads and deletes the shared flow under name in one step, so that
// it is single use across replicas: nil and no error when there is none
// (never shared, taken by another replica, expired, or not one a trunk
// shared); an error when the store did not answer, which says nothing of
// whether it is there.
func (m *Manager) take(ctx context.Context, name string) (*flow, error) {
	b, err := m.opts.Store.Take(ctx, name, true)
	switch {
	case errors.Is(err, statestore.ErrNotFound):
		return nil, nil
	case errors.As(err, new(*statestore.UnavailableError)), ctx.Err() != nil:
		return nil, err
	case err != nil:
		m.opts.Logger.Warn("a shared sign-in in the state store cannot be read; ignored", "error", err)
		return nil, nil
	}
	var sf sharedFlow
	if err := json.Unmarshal(b, &sf); err != nil {
		m.opts.Logger.Warn("a shared sign-in in the state store cannot be read; ignored", "error", err)
		return nil, nil
	}
	return &flow{id: sf.ID, state: sf.State, verifier: sf.Verifier, binding: sf.Binding, server: sf.Server, caller: Caller{Subject: sf.Subject},
		expires: sf.Expires, registration: sf.Registration, shared: true, remote: true, done: make(chan struct{})}, nil
}

// cookieName is the name of f's binding cookie: one per flow, so that a
// browser can run sign-ins to two servers at once; found from the state
// alone at the callback.
func cookieName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "mcptrunk_signin_" + hex.EncodeToString(sum[:8])
}

// start makes a flow for c and server, after finding where to sign in.
func (m *Manager) start(ctx context.Context, c Caller, id string) (*flow, error) {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	web, err := s.webClient(ctx, m, id)
	if err != nil {
		return nil, err
	}
	f := &flow{id: oauth.NewVerifier(), state: oauth.NewVerifier(), verifier: oauth.NewVerifier(), binding: oauth.NewVerifier(),
		server: id, caller: c, expires: m.opts.Now().Add(m.opts.FlowTTL), done: make(chan struct{})}
	if f.registration, err = web.Registration(); err != nil {
		return nil, err
	}
	m.share(ctx, f)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	m.flows[f.id], m.states[f.state] = f, f
	return f, nil
}

// sweep forgets expired flows (under m.mu).
func (m *Manager) sweep() {
	now := m.opts.Now()
	for _, f := range m.states { // every flow not yet called back
		if now.After(f.expires) {
			m.forget(f)
		}
	}
}

// connectURL is where the caller's browser starts f.
func (m *Manager) connectURL(f *flow) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.base + connectPath + f.id
}

// finish ends f with err (nil: signed in) and tells its host, when the
// host opens URLs, that the elicitation is complete.
func (m *Manager) finish(f *flow, err error) {
	first := false
	f.once.Do(func() {
		f.err, first = err, true
		close(f.done)
	})
	if !first {
		return
	}
	if f.caller.Notify != nil && urlMode(f.caller) {
		params, _ := json.Marshal(map[string]string{"elicitationId": f.id})
		if nerr := f.caller.Notify("notifications/elicitation/complete", params); nerr != nil {
			m.opts.Logger.Debug("telling the host the sign-in ended failed", "server", f.server, "subject", f.caller.Subject, "error", nerr)
		}
	}
}
