package oauth

import "strings"

// Server is what the OAuth side needs to know of one server, and nothing
// of how mcptrunk's config spells it: the package stays a leaf that any
// caller can hand a server to (upstream.OAuthServer builds one from a
// config entry).
type Server struct {
	// Name is the server's name in the config, for messages.
	Name string
	// URL is the server's MCP endpoint; "" for a server that is not
	// remote, which OAuth is not for. Tokens are stored under it.
	URL string
	// SSE is set for the legacy HTTP+SSE transport: the first request is
	// a GET of the event stream, not a POST.
	SSE bool
	// Headers are sent on every request to the server (and to its own
	// origin's metadata). One that sets Authorization turns OAuth off.
	Headers map[string]string
	// ClientID (and ClientSecret, for a confidential client) of a client
	// registered beforehand; without it mcptrunk registers dynamically.
	ClientID, ClientSecret string
	// Scopes to ask for; by default those the server names.
	Scopes []string
	// CallbackPort is the loopback port the browser is redirected to; 0
	// picks a free one.
	CallbackPort int
}

// usesOAuth reports whether the server's requests carry stored tokens: it
// is remote and its headers do not set Authorization themselves.
func (s Server) usesOAuth() bool {
	return s.URL != "" && !s.setsAuthorization()
}

func (s Server) setsAuthorization() bool {
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
