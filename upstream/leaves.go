package upstream

import (
	"context"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
	"github.com/mcptrunk/mcptrunk/upstream/transport/remote"
)

// The leaves (transport/stdio, transport/remote, oauth) take small option
// structs of their own, not config.Spec: this file is the one place a
// config entry is turned into them.

// OAuthServer is spec's server as the OAuth client sees it (for
// "mcptrunk auth" and the background flow). A server that is not remote
// has no URL there, which oauth.Authorize refuses.
func OAuthServer(spec config.Spec) oauth.Server {
	s := oauth.Server{
		Name:         spec.Name,
		SSE:          spec.Type == config.TransportSSE,
		Headers:      spec.Headers,
		ClientID:     spec.OAuth.ClientID,
		ClientSecret: spec.OAuth.ClientSecret,
		Scopes:       spec.OAuth.Scopes,
		CallbackPort: spec.OAuth.CallbackPort,
	}
	if spec.Type == config.TransportHTTP || spec.Type == config.TransportSSE {
		s.URL = spec.URL
	}
	return s
}

// remoteEndpoint is spec's server as transport/remote dials it; a server
// with per-user credentials takes its Authorization from authz.
func remoteEndpoint(spec config.Spec, id, version string, authz func(ctx context.Context, server, refused string) (string, error)) remote.Endpoint {
	e := remote.Endpoint{
		ID:             id,
		URL:            spec.URL,
		Headers:        spec.Headers,
		ConnectTimeout: spec.Timeouts.Connect.D(),
		UserAgent:      "mcptrunk/" + version,
		OAuth:          OAuthServer(spec),
	}
	if spec.PerUser() && authz != nil {
		e.Authorization = func(ctx context.Context, refused string) (string, error) { return authz(ctx, id, refused) }
	}
	return e
}
