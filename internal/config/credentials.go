package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Credentials say whose credential a server's calls carry (the server's
// "credentials"). The zero value is the shared one: the entry's own env and
// headers, one instance for every caller. Any mode makes the credential
// per-user: on a trunk whose callers sign in (trunk.http.auth), each
// caller's calls go to an instance of its own that carries that caller's
// credential, and a caller without an identity is refused.
type Credentials struct {
	// Mode is CredentialsExchange, CredentialsStatic or CredentialsOAuth;
	// "" is shared.
	Mode string `json:"mode,omitempty"`

	// Exchange (RFC 8693): the trunk trades the caller's access token at
	// the issuer's token endpoint for one whose audience is this server,
	// authenticating as its own client.
	Issuer        string   `json:"issuer,omitempty"`        // default trunk.http.auth.issuer
	TokenEndpoint string   `json:"tokenEndpoint,omitempty"` // default: the issuer's metadata says
	Audience      string   `json:"audience,omitempty"`      // the server's identifier at the issuer
	Resource      string   `json:"resource,omitempty"`      // RFC 8707 resource; optional
	Scopes        []string `json:"scopes,omitempty"`
	ClientID      string   `json:"clientId,omitempty"`
	ClientSecret  string   `json:"clientSecret,omitempty"`

	// Static: each subject's secrets, from File (JSON: subject -> {env,
	// headers}, read when the subject's instance starts) or Users, whose
	// values come from ${VAR} references.
	File  string                 `json:"file,omitempty"`
	Users map[string]UserSecrets `json:"users,omitempty"`

	// OAuth: each caller signs in to the server's own authorization
	// server (proxy/signin), found by the server's metadata; ClientID
	// and ClientSecret, when set, are a client registered there (else
	// the trunk registers dynamically), Scopes what to ask for.
}

// UserSecrets are one subject's secrets: env for a stdio server, headers
// for a remote one, added to (and overriding) the entry's own.
type UserSecrets struct {
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Credential modes (Credentials.Mode).
const (
	CredentialsShared   = "shared"
	CredentialsExchange = "exchange"
	CredentialsStatic   = "static"
	CredentialsOAuth    = "oauth"
)

// PerUser reports whether each caller gets an instance of its own carrying
// its own credential.
func (s Spec) PerUser() bool { return s.Credentials.Mode != "" }

type rawCredentials struct {
	Mode          json.RawMessage `json:"mode"`
	Issuer        json.RawMessage `json:"issuer"`
	TokenEndpoint json.RawMessage `json:"tokenEndpoint"`
	Audience      json.RawMessage `json:"audience"`
	Resource      json.RawMessage `json:"resource"`
	Scopes        json.RawMessage `json:"scopes"`
	ClientID      json.RawMessage `json:"clientId"`
	ClientSecret  json.RawMessage `json:"clientSecret"`
	File          json.RawMessage `json:"file"`
	Users         json.RawMessage `json:"users"`
}

// varRef is a value that is exactly one ${VAR} reference.
// Compiled when first used: most configs have no per-user credentials.
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$`)
})

// credentials decodes, expands and validates "credentials" for a server of
// transport typ; trunk gives the default issuer. Values are never quoted:
// most of them are secrets.
func (p *fieldErrs) credentials(raw json.RawMessage, s *Spec, headers map[string]string, oauth bool, lookup func(string) (string, bool), trunk TrunkOptions) {
	var rc rawCredentials
	if !p.object(raw, "credentials", &rc) {
		return
	}
	c := &s.Credentials
	mode, _ := p.str(rc.Mode, "credentials.mode")
	switch mode {
	case "", CredentialsShared:
		return
	case "passthrough":
		p.addf("credentials.mode", `"passthrough" is refused: the caller's token was issued for the trunk (its audience is the trunk), and a server given it could replay it against the trunk and anything else that accepts it; use "exchange", which gets the server a token of its own for the same user`)
		return
	case CredentialsExchange, CredentialsStatic, CredentialsOAuth:
		c.Mode = mode
	default:
		p.addf("credentials.mode", "must be %q, %q, %q or %q, got %q", CredentialsShared, CredentialsExchange, CredentialsStatic, CredentialsOAuth, mode)
		return
	}
	strField := func(raw json.RawMessage, name string) string {
		v, _ := p.str(raw, "credentials."+name)
		v, _ = p.expand("credentials."+name, v, lookup)
		if strings.ContainsAny(v, "\r\n\x00") {
			p.addf("credentials."+name, "contains a line break or NUL byte")
		}
		return v
	}
	if c.Mode == CredentialsStatic {
		for _, f := range []struct {
			raw  json.RawMessage
			name string
		}{{rc.Issuer, "issuer"}, {rc.TokenEndpoint, "tokenEndpoint"}, {rc.Audience, "audience"}, {rc.Resource, "resource"}, {rc.Scopes, "scopes"}, {rc.ClientID, "clientId"}, {rc.ClientSecret, "clientSecret"}} {
			if !rawAbsent(f.raw) {
				p.addf("credentials."+f.name, `only for mode "exchange"`)
			}
		}
		c.File = strField(rc.File, "file")
		c.Users = p.userSecrets(rc.Users, s.Type == TransportStdio, lookup)
		switch {
		case c.File != "" && c.Users != nil:
			p.addf("credentials", `"file" and "users" are mutually exclusive`)
		case c.File == "" && c.Users == nil:
			p.addf("credentials", `mode "static" needs "file" (a JSON file: subject -> {"env": {...}, "headers": {...}}) or "users"`)
		}
		return
	}
	for _, f := range []struct {
		raw  json.RawMessage
		name string
	}{{rc.File, "file"}, {rc.Users, "users"}} {
		if !rawAbsent(f.raw) {
			p.addf("credentials."+f.name, `only for mode "static"`)
		}
	}
	if c.Mode == CredentialsOAuth {
		p.oauthCredentials(rc, s, headers, trunk, strField)
		return
	}
	c.Issuer = strField(rc.Issuer, "issuer")
	c.TokenEndpoint = strField(rc.TokenEndpoint, "tokenEndpoint")
	c.Audience = strField(rc.Audience, "audience")
	c.Resource = strField(rc.Resource, "resource")
	c.ClientID = strField(rc.ClientID, "clientId")
	c.ClientSecret = strField(rc.ClientSecret, "clientSecret")
	c.Scopes, _ = p.strs(rc.Scopes, "credentials.scopes")
	if c.Issuer == "" && trunk.HTTP.Auth != nil {
		c.Issuer = trunk.HTTP.Auth.Issuer
	}
	switch {
	case s.Type == TransportStdio:
		p.addf("credentials.mode", `"exchange" is only for remote servers (type "http" or "sse"): the exchanged token goes in their Authorization header`)
	case hasAuthorizationHeader(headers):
		p.addf("credentials", `an Authorization header is configured too: the exchanged token is the server's Authorization; remove the header`)
	case oauth:
		p.addf("credentials", `"oauth" is set too: with "exchange" the trunk gets the server's tokens itself; remove "oauth"`)
	}
	if c.Issuer == "" {
		p.addf("credentials.issuer", "required for exchange when trunk.http.auth sets no issuer")
	}
	for _, f := range []struct{ name, v string }{{"issuer", c.Issuer}, {"tokenEndpoint", c.TokenEndpoint}} {
		if f.v == "" {
			continue
		}
		if u, err := url.Parse(f.v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			p.addf("credentials."+f.name, "must be an http(s) URL")
		}
	}
	if c.Audience == "" && c.Resource == "" {
		p.addf("credentials.audience", "required: the server's identifier at the issuer, which the exchanged token names as its audience")
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		p.addf("credentials.clientId", "clientId and clientSecret are required: the trunk authenticates to the token endpoint as its own client (use ${VAR} for the secret)")
	}
}

// userSecrets decodes "users": subject -> {env, headers}, every value a
// ${VAR} reference (the secrets stay out of the file), expanded.
func (p *fieldErrs) userSecrets(raw json.RawMessage, stdio bool, lookup func(string) (string, bool)) map[string]UserSecrets {
	if rawAbsent(raw) {
		return nil
	}
	var byUser map[string]json.RawMessage
	if rawKind(raw) != "object" || json.Unmarshal(raw, &byUser) != nil {
		p.wrongType("credentials.users", "object of subject -> {env, headers}", raw)
		return nil
	}
	out := make(map[string]UserSecrets, len(byUser))
	for _, sub := range sortedMapKeys(byUser) {
		field := keyField("credentials.users", sub)
		// A map, not a raw struct: the keys under "users" are subjects,
		// which the unknown-key warnings must not walk.
		var ru map[string]json.RawMessage
		if rawKind(byUser[sub]) != "object" || json.Unmarshal(byUser[sub], &ru) != nil {
			p.wrongType(field, `object {"env": {...}, "headers": {...}}`, byUser[sub])
			continue
		}
		for _, k := range sortedMapKeys(ru) {
			if k != "env" && k != "headers" {
				p.addf(keyField(field, k), `unknown key: a user's secrets are "env" and "headers"`)
			}
		}
		var u UserSecrets
		for _, m := range []struct {
			raw  json.RawMessage
			name string
			dst  *map[string]string
		}{{ru["env"], "env", &u.Env}, {ru["headers"], "headers", &u.Headers}} {
			vals, _ := p.strMap(m.raw, field+"."+m.name)
			if len(vals) > 0 && (m.name == "env") != stdio {
				p.addf(field+"."+m.name, "not for this server: env is a stdio server's, headers a remote server's")
				continue
			}
			for _, k := range sortedMapKeys(vals) {
				f := keyField(field+"."+m.name, k)
				if !varRef().MatchString(vals[k]) {
					p.addf(f, "must be a ${VAR} reference: per-user secrets stay out of the config file")
					continue
				}
				v, ok := p.expand(f, vals[k], lookup)
				if ok && strings.ContainsAny(v, "\r\n\x00") {
					p.addf(f, "value contains a line break or NUL byte")
				}
				if *m.dst == nil {
					*m.dst = map[string]string{}
				}
				(*m.dst)[k] = v
			}
		}
		out[sub] = u
	}
	return out
}

// resolveCredentialsFile makes a relative credentials file relative to the
// config file's directory.
func resolveCredentialsFile(s *Spec, dir string) {
	if f := s.Credentials.File; f != "" && !filepath.IsAbs(f) {
		s.Credentials.File = filepath.Join(dir, f)
	}
}

// CallerIdle is how long a caller's own instances of servers with
// per-user credentials outlive its last session: trunk.idleTimeout when
// set, else five minutes.
func (o TrunkOptions) CallerIdle() time.Duration {
	if d := o.IdleTimeout.D(); d > 0 {
		return d
	}
	return 5 * time.Minute
}

// CredentialsSummary says in a few words whose credential the server's
// calls carry, for mcptrunk check.
func (s Spec) CredentialsSummary() string {
	switch s.Credentials.Mode {
	case CredentialsExchange:
		return fmt.Sprintf("per-user (exchange at %s for audience %s)", s.Credentials.Issuer, firstNonEmpty(s.Credentials.Audience, s.Credentials.Resource))
	case CredentialsOAuth:
		if s.Credentials.ClientID != "" {
			return "per-user (oauth sign-in, client " + s.Credentials.ClientID + ")"
		}
		return "per-user (oauth sign-in, dynamic client registration)"
	case CredentialsStatic:
		if s.Credentials.File != "" {
			return "per-user (static, from " + s.Credentials.File + ")"
		}
		return "per-user (static, " + wordingUsers(len(s.Credentials.Users)) + " in the config)"
	}
	return "shared"
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func wordingUsers(n int) string {
	if n == 1 {
		return "1 user"
	}
	return fmt.Sprintf("%d users", n)
}
