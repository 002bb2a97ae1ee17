package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// HTTPAuth makes the HTTP listener an OAuth resource server
// (trunk.http.auth): hosts sign in at the team's authorization server and
// send its access tokens, which the trunk checks (internal/accesstoken).
// The values may use ${VAR}, so that one file serves every deployment.
type HTTPAuth struct {
	// Issuer is the authorization server's issuer URL; its keys are found
	// through its discovery document.
	Issuer string `json:"issuer"`
	// Resource is the trunk's MCP endpoint as clients reach it
	// ("https://trunk.example.com/mcp"): tokens must name it in aud.
	Resource string `json:"resource"`
	// Scopes every token must grant; none by default.
	Scopes []string `json:"scopes,omitempty"`
	// SubjectClaim names the claim that identifies the caller ("sub" when
	// empty; "email" is common).
	SubjectClaim string `json:"subjectClaim,omitempty"`
	// TokenTypes are the JWT typ headers accepted (["at+jwt"] when empty,
	// RFC 9068's): an authorization server whose access tokens say "JWT"
	// (Ory Hydra, Keycloak, Entra ID) needs "JWT" here. The audience
	// check still refuses its ID tokens, whose aud is a client id.
	TokenTypes []string `json:"tokenTypes,omitempty"`
}

type rawHTTPAuth struct {
	Issuer       json.RawMessage `json:"issuer"`
	Resource     json.RawMessage `json:"resource"`
	Scopes       json.RawMessage `json:"scopes"`
	SubjectClaim json.RawMessage `json:"subjectClaim"`
	TokenTypes   json.RawMessage `json:"tokenTypes"`
}

// httpAuth decodes, expands and validates trunk.http.auth; nil when absent.
func (p *fieldErrs) httpAuth(raw json.RawMessage, field string, lookup func(string) (string, bool)) *HTTPAuth {
	var ra rawHTTPAuth
	if !p.object(raw, field, &ra) {
		return nil
	}
	a := &HTTPAuth{}
	for _, f := range []struct {
		raw  json.RawMessage
		name string
		dst  *string
	}{{ra.Issuer, "issuer", &a.Issuer}, {ra.Resource, "resource", &a.Resource}, {ra.SubjectClaim, "subjectClaim", &a.SubjectClaim}} {
		if s, ok := p.str(f.raw, field+"."+f.name); ok {
			*f.dst, _ = p.expand(field+"."+f.name, s, lookup)
		}
	}
	for _, f := range []struct{ name, v string }{{"issuer", a.Issuer}, {"resource", a.Resource}} {
		if u, err := url.Parse(f.v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			p.addf(field+"."+f.name, "must be an http(s) URL, got %q", f.v)
		}
	}
	if scopes, ok := p.strs(ra.Scopes, field+".scopes"); ok {
		a.Scopes = scopes
	}
	if types, ok := p.strs(ra.TokenTypes, field+".tokenTypes"); ok {
		for i, typ := range types {
			if strings.TrimSpace(typ) == "" {
				p.addf(fmt.Sprintf("%s.tokenTypes[%d]", field, i), "must name a JWT typ header (\"at+jwt\", \"JWT\"), got %q", typ)
			}
		}
		a.TokenTypes = types
	}
	return a
}
