package signin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
)

// remoteCheck is how often a call waiting for its caller's sign-in looks
// in the store for one completed by another replica.
const remoteCheck = time.Second

// CodeURLElicitationRequired is MCP's URLElicitationRequiredError
// (2025-11-25): the request cannot go on until the user completes the
// URL elicitations its data lists.
const CodeURLElicitationRequired = -32042

// Require lets c's call to server go on once c has a token for it. A
// server not in oauth mode, or one c has signed in to, needs nothing.
// Otherwise a sign-in starts: a host that opens URLs (a 2025-era session
// that declared elicitation.url) is sent elicitation/create in URL mode
// and, once it accepts, the call waits for the callback (until ctx ends);
// any other host gets the URLElicitationRequiredError, whose message
// names the server and the URL too, and retries after signing in.
func (m *Manager) Require(ctx context.Context, c Caller, id string) error {
	m.mu.Lock()
	s := m.servers[id]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	_, err := m.Authorization(ctx, c.Subject, id, "")
	if err == nil {
		return nil // signed in (refreshed if it had to be)
	}
	if ctx.Err() != nil {
		return ctx.Err() // the caller gave up: no sign-in to start
	}
	if ue, ok := errors.AsType[*statestore.UnavailableError](err); ok {
		// Asking to sign in again would not help: the sign-in may be
		// there. The host is told which store, the log why.
		m.opts.Logger.Warn("a sign-in cannot be read: the state store is unavailable", "server", id, "subject", c.Subject, "error", err)
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q: the state store (%s, trunk.state) is unavailable, so the sign-in of %q cannot be read; try again shortly", id, ue.Kind, c.Subject)
	}
	f, err := m.start(ctx, c, id)
	if err != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err)
	}
	link := m.connectURL(f)
	msg := fmt.Sprintf("Sign in to server %q to let it act as you (%s).", id, c.Subject)
	elicitation := map[string]string{"mode": "url", "message": msg, "url": link, "elicitationId": f.id}
	if urlMode(c) && c.Ask != nil {
		params, _ := json.Marshal(elicitation)
		res, err := c.Ask(ctx, "elicitation/create", params)
		if err == nil {
			var r struct {
				Action string `json:"action"`
			}
			_ = json.Unmarshal(res, &r)
			if r.Action != "accept" {
				return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "server %q: the sign-in was not accepted (%s), so the call cannot act as %q", id, r.Action, c.Subject)
			}
			timer := time.NewTimer(m.opts.FlowTTL)
			defer timer.Stop()
			// Another replica may complete it (the browser's requests go
			// where the balancer sends them): it says so only through
			// the grant it stores.
			elsewhere := time.NewTicker(remoteCheck)
			defer elsewhere.Stop()
			for {
				select {
				case <-timer.C:
					return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "server %q: the sign-in was not completed in time", id)
				case <-f.done:
					if f.err != nil {
						return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "server %q: the sign-in failed: %v", id, f.err)
					}
					return nil
				case <-elsewhere.C:
					if _, g, err := m.grant(ctx, c.Subject, id); err == nil && g != nil {
						m.mu.Lock()
						m.forget(f)
						m.mu.Unlock()
						m.finish(f, nil)
					}
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		m.opts.Logger.Debug("asking the host to open the sign-in URL failed; answering with the error instead", "server", id, "subject", c.Subject, "error", err)
	}
	data, _ := json.Marshal(map[string]any{"elicitations": []any{elicitation}})
	return &jsonrpc.Error{Code: CodeURLElicitationRequired, Message: fmt.Sprintf("server %q needs you to sign in: open %s, then try again", id, link), Data: data}
}

// urlMode reports whether c's host opens URLs for servers mid-call.
func urlMode(c Caller) bool {
	if c.Stateless || len(c.Elicitation) == 0 {
		return false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.Elicitation, &caps) != nil {
		return false
	}
	_, ok := caps["url"]
	return ok
}
