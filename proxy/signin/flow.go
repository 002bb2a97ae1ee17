package signin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

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
	if _, err := s.webClient(ctx, m, id); err != nil {
		return nil, err
	}
	f := &flow{id: oauth.NewVerifier(), state: oauth.NewVerifier(), verifier: oauth.NewVerifier(), binding: oauth.NewVerifier(),
		server: id, caller: c, expires: m.opts.Now().Add(m.opts.FlowTTL), done: make(chan struct{})}
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
	return m.base + ConnectPath + f.id
}

// finish ends f with err (nil: signed in) and tells its host, when the
// host opens URLs, that the elicitation is complete.
func (m *Manager) finish(f *flow, err error) {
	f.err = err
	close(f.done)
	if f.caller.Notify != nil && urlMode(f.caller) {
		params, _ := json.Marshal(map[string]string{"elicitationId": f.id})
		if nerr := f.caller.Notify("notifications/elicitation/complete", params); nerr != nil {
			m.opts.Logger.Debug("telling the host the sign-in ended failed", "server", f.server, "subject", f.caller.Subject, "error", nerr)
		}
	}
}
