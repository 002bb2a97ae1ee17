package config

import (
	"encoding/json"
	"strings"
)

// oauthCredentials validates mode "oauth": each caller signs in to the
// server's own authorization server through the trunk's listener, whose
// public URL is trunk.http.auth.resource (the callback goes there). The
// server's own "oauth" may stay: the instance that lists the server's
// tools uses the trunk's own sign-in (mcptrunk auth).
func (p *fieldErrs) oauthCredentials(rc rawCredentials, s *Spec, headers map[string]string, trunk TrunkOptions, strField func(raw json.RawMessage, name string) string) {
	c := &s.Credentials
	for _, f := range []struct {
		raw  json.RawMessage
		name string
	}{{rc.Issuer, "issuer"}, {rc.TokenEndpoint, "tokenEndpoint"}, {rc.Audience, "audience"}, {rc.Resource, "resource"}, {rc.File, "file"}, {rc.Users, "users"}} {
		if !rawAbsent(f.raw) {
			p.addf("credentials."+f.name, `not for mode "oauth": the server's own metadata names its authorization server and resource`)
		}
	}
	c.ClientID = strField(rc.ClientID, "clientId")
	c.ClientSecret = strField(rc.ClientSecret, "clientSecret")
	c.Scopes, _ = p.strs(rc.Scopes, "credentials.scopes")
	switch {
	case s.Type == TransportStdio:
		p.addf("credentials.mode", `"oauth" is only for remote servers (type "http" or "sse"): the caller's token goes in their Authorization header`)
	case hasAuthorizationHeader(headers):
		p.addf("credentials", `an Authorization header is configured too: with "oauth" each caller's own token is the server's Authorization; remove the header`)
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		p.addf("credentials.clientSecret", "needs clientId")
	}
	if a := trunk.HTTP.Auth; a == nil || !strings.HasPrefix(a.Resource, "http") {
		p.addf("credentials.mode", `"oauth" needs trunk.http.auth with its resource (the trunk's public URL): callers sign in there, and the sign-in's callback is <its origin>/oauth/callback`)
	}
}
