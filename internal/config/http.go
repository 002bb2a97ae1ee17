package config

import (
	"encoding/json"
	"net"
	"net/url"
	"strings"
)

// HTTP is the streamable HTTP downstream (trunk.http; `serve --http` and its
// flags win over it): many hosts share one trunk through it.
type HTTP struct {
	// Listen is the address served ("127.0.0.1:8931"); empty serves no HTTP
	// unless --http says so. A non-loopback address needs a token.
	Listen string `json:"listen,omitempty"`
	// Path is the MCP endpoint ("/mcp" when empty).
	Path string `json:"path,omitempty"`
	// TokenFile holds the bearer token clients must send; relative to the
	// config's directory. A file that does not exist is created with a new
	// random token (0600) and the token printed once.
	TokenFile string `json:"tokenFile,omitempty"`
	// SigningKeyFile holds the secret the trunk signs the tokens it hands
	// hosts under (task ids, request states), shared by the replicas of one
	// deployment so that each opens the others'; relative to the config's
	// directory. Never created: replicas with keys of their own would not
	// share them. Without it each process signs with a key of its own.
	SigningKeyFile string `json:"signingKeyFile,omitempty"`
	// AllowedOrigins are browser origins allowed besides the listener's own,
	// with CORS; none by default.
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	// Auth, when set, admits hosts by the access tokens of an OAuth
	// authorization server (httpauth.go); a static token still works.
	Auth *HTTPAuth `json:"auth,omitempty"`
	// The limits (docs/security.md); zero takes the defaults of
	// proxy/httpserve.
	MaxSessions             int      `json:"maxSessions,omitempty"`
	MaxSessionsPerClient    int      `json:"maxSessionsPerClient,omitempty"`
	MaxInFlight             int      `json:"maxInFlight,omitempty"`
	MaxBodyBytes            int      `json:"maxBodyBytes,omitempty"`
	MaxBufferedBytes        int      `json:"maxBufferedBytes,omitempty"`
	MaxSessionBufferedBytes int      `json:"maxSessionBufferedBytes,omitempty"`
	MaxConnections          int      `json:"maxConnections,omitempty"`
	MaxConnectionsPerClient int      `json:"maxConnectionsPerClient,omitempty"`
	SessionIdle             Duration `json:"sessionIdleTimeout,omitzero"`
	HandshakeTimeout        Duration `json:"handshakeTimeout,omitzero"`
	IdleTimeout             Duration `json:"idleTimeout,omitzero"`
	BodyTimeout             Duration `json:"bodyTimeout,omitzero"`
}

type rawHTTP struct {
	Listen         json.RawMessage `json:"listen"`
	Path           json.RawMessage `json:"path"`
	TokenFile      json.RawMessage `json:"tokenFile"`
	SigningKey     json.RawMessage `json:"signingKeyFile"`
	AllowedOrigins json.RawMessage `json:"allowedOrigins"`
	Auth           json.RawMessage `json:"auth"`
	MaxSessions    json.RawMessage `json:"maxSessions"`
	MaxSessionsPC  json.RawMessage `json:"maxSessionsPerClient"`
	MaxInFlight    json.RawMessage `json:"maxInFlight"`
	MaxBodyBytes   json.RawMessage `json:"maxBodyBytes"`
	MaxBuffered    json.RawMessage `json:"maxBufferedBytes"`
	MaxSessionBuf  json.RawMessage `json:"maxSessionBufferedBytes"`
	MaxConns       json.RawMessage `json:"maxConnections"`
	MaxConnsPC     json.RawMessage `json:"maxConnectionsPerClient"`
	SessionIdle    json.RawMessage `json:"sessionIdleTimeout"`
	Handshake      json.RawMessage `json:"handshakeTimeout"`
	IdleTimeout    json.RawMessage `json:"idleTimeout"`
	BodyTimeout    json.RawMessage `json:"bodyTimeout"`
}

// httpOptions decodes and validates trunk.http.
func (p *fieldErrs) httpOptions(raw json.RawMessage, field string, lookup func(string) (string, bool)) HTTP {
	var rh rawHTTP
	if !p.object(raw, field, &rh) {
		return HTTP{}
	}
	var h HTTP
	if s, ok := p.str(rh.Listen, field+".listen"); ok && s != "" {
		if _, _, err := net.SplitHostPort(s); err != nil {
			p.addf(field+".listen", "must be HOST:PORT, such as 127.0.0.1:8931, got %q", s)
		}
		h.Listen = s
	}
	if s, ok := p.str(rh.Path, field+".path"); ok && s != "" {
		if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, " ?#{}") {
			p.addf(field+".path", "must be a URL path starting with /, such as /mcp, got %q", s)
		}
		h.Path = s
	}
	if s, ok := p.str(rh.TokenFile, field+".tokenFile"); ok {
		h.TokenFile = s
	}
	if s, ok := p.str(rh.SigningKey, field+".signingKeyFile"); ok {
		h.SigningKeyFile = s
	}
	if origins, ok := p.strs(rh.AllowedOrigins, field+".allowedOrigins"); ok {
		for _, o := range origins {
			if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
				p.addf(field+".allowedOrigins", "must be origins such as https://app.example.com (scheme and host, no path), got %q", o)
			}
		}
		h.AllowedOrigins = origins
	}
	for _, n := range []struct {
		raw  json.RawMessage
		name string
		dst  *int
	}{{rh.MaxSessions, "maxSessions", &h.MaxSessions}, {rh.MaxSessionsPC, "maxSessionsPerClient", &h.MaxSessionsPerClient},
		{rh.MaxInFlight, "maxInFlight", &h.MaxInFlight}, {rh.MaxBodyBytes, "maxBodyBytes", &h.MaxBodyBytes},
		{rh.MaxBuffered, "maxBufferedBytes", &h.MaxBufferedBytes}, {rh.MaxSessionBuf, "maxSessionBufferedBytes", &h.MaxSessionBufferedBytes},
		{rh.MaxConns, "maxConnections", &h.MaxConnections}, {rh.MaxConnsPC, "maxConnectionsPerClient", &h.MaxConnectionsPerClient}} {
		if v, ok := p.integer(n.raw, field+"."+n.name); ok {
			if v < 0 {
				p.addf(field+"."+n.name, "must not be negative, got %d", v)
			}
			*n.dst = v
		}
	}
	h.SessionIdle = p.duration(rh.SessionIdle, field+".sessionIdleTimeout")
	h.HandshakeTimeout = p.duration(rh.Handshake, field+".handshakeTimeout")
	h.IdleTimeout = p.duration(rh.IdleTimeout, field+".idleTimeout")
	h.BodyTimeout = p.duration(rh.BodyTimeout, field+".bodyTimeout")
	h.Auth = p.httpAuth(rh.Auth, field+".auth", lookup)
	return h
}
