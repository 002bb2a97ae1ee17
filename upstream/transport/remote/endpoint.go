package remote

import (
	"context"
	"time"

	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// Endpoint is the remote server one connection talks to: what the transport
// needs of it and nothing of how mcptrunk's config spells it, so that the
// package stays a leaf (upstream builds one from a config entry, as it
// builds a stdio.Command for a process).
type Endpoint struct {
	// ID is the server's id, in messages and logs.
	ID string
	// URL is the MCP endpoint (streamable HTTP) or the event stream (SSE).
	URL string
	// Headers go on every request; their values are never quoted. A Host
	// header sets the request's Host.
	Headers map[string]string
	// ConnectTimeout bounds what is sent outside a call (notifications,
	// a new session's handshake); 0 leaves the transport's own default.
	ConnectTimeout time.Duration
	// UserAgent is sent unless Headers set one.
	UserAgent string
	// OAuth is the server as the OAuth client sees it; oauth.NewSource
	// decides whether it uses stored tokens.
	OAuth oauth.Server
	// Authorization, when set, gives the Authorization header of each
	// request ("" sends none) in place of OAuth: a per-user instance's
	// credential, such as a token exchanged for its caller. Its values are
	// never quoted either. refused is the value the server has just
	// refused (a 401), which the source drops rather than give again; ""
	// when none was.
	Authorization func(ctx context.Context, refused string) (string, error)
}
