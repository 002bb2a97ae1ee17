package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// Discovery: from a server's 401 (or its well-known URIs) to the
// authorization server's endpoints.
//
//  1. Protected resource metadata (RFC 9728): the resource_metadata URL of
//     the 401's Bearer challenge, else
//     <origin>/.well-known/oauth-protected-resource<path>, else
//     <origin>/.well-known/oauth-protected-resource. Its resource, when
//     given, must be the server's URL or a parent of it; its first
//     authorization server is used. A server with no such metadata (the
//     2025-03-26 revision) has its own origin as authorization server.
//  2. Authorization server metadata: for an issuer with a path, RFC 8414
//     with the path inserted, OpenID Connect with the path inserted, OpenID
//     Connect with the path appended; for one without, RFC 8414, then
//     OpenID Connect. The issuer must match, and S256 must be among
//     code_challenge_methods_supported (absent means no PKCE: refused).
//
// Every endpoint must be https, or http on a loopback address.

// authHTTPTimeout bounds each request to the authorization server or for
// metadata. A variable for tests.
var authHTTPTimeout = 30 * time.Second

// metadataLimit bounds a metadata document or token response.
const metadataLimit = 1 << 20

// challenge is one challenge of a WWW-Authenticate header.
type challenge struct {
	scheme string            // lower case
	params map[string]string // names in lower case
}

// bearerChallenge returns the Bearer challenge among ch, or nil.
func bearerChallenge(ch []challenge) *challenge {
	for i := range ch {
		if ch[i].scheme == "bearer" {
			return &ch[i]
		}
	}
	return nil
}

func (c *challenge) param(name string) string {
	if c == nil {
		return ""
	}
	return c.params[name]
}

// parseChallenges parses WWW-Authenticate header values (RFC 9110 §11.6.1):
// each holds challenges separated by commas, each a scheme followed by
// name=value parameters (token or quoted string). A token68 (Basic,
// Negotiate) ends up as a meaningless parameter, which is harmless: only
// Bearer's parameters are read.
func parseChallenges(values []string) []challenge {
	var out []challenge
	for _, v := range values {
		s := v
		i := 0
		cur := -1
		for i < len(s) {
			for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
				i++
			}
			start := i
			for i < len(s) && isTokenChar(s[i]) {
				i++
			}
			if i == start {
				i++ // not a token: skip the character
				continue
			}
			tok := s[start:i]
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < len(s) && s[j] == '=' && cur >= 0 {
				// A parameter of the current challenge.
				j++
				for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
					j++
				}
				var val string
				val, i = readParamValue(s, j)
				name := strings.ToLower(tok)
				if _, dup := out[cur].params[name]; !dup {
					out[cur].params[name] = val
				}
				continue
			}
			// A new challenge.
			out = append(out, challenge{scheme: strings.ToLower(tok), params: map[string]string{}})
			cur = len(out) - 1
			i = j
		}
	}
	return out
}

// readParamValue reads a token or a quoted string at s[i:].
func readParamValue(s string, i int) (string, int) {
	if i < len(s) && s[i] == '"' {
		var b strings.Builder
		i++
		for i < len(s) {
			c := s[i]
			switch {
			case c == '\\' && i+1 < len(s):
				b.WriteByte(s[i+1])
				i += 2
			case c == '"':
				return b.String(), i + 1
			default:
				b.WriteByte(c)
				i++
			}
		}
		return b.String(), i
	}
	start := i
	for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
		i++
	}
	return s[start:i], i
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/", c) >= 0
}

// resourceMetadata is a protected resource metadata document (RFC 9728).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is authorization server metadata (RFC 8414 / OpenID
// Connect Discovery): the fields mcptrunk uses.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
}

// discovery is what the flow needs to know about a server.
type discovery struct {
	resource string   // the resource parameter
	scopes   []string // to ask for, unless the config says
	issuer   string
	meta     serverMetadata
}

// authClient is an HTTP client for metadata and the authorization server:
// bounded requests, redirects only for GETs. Close it with
// CloseIdleConnections.
func newAuthClient() *http.Client {
	var tr *http.Transport
	if base, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = base.Clone()
	} else {
		tr = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	return &http.Client{
		Transport: tr,
		Timeout:   authHTTPTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if req.Method != http.MethodGet {
				return http.ErrUseLastResponse
			}
			return checkEndpoint("redirect", req.URL.String())
		},
	}
}

// checkEndpoint requires an https URL, or http on a loopback host (OAuth
// 2.1 §1.5: endpoints are https; a local server for development is the
// exception).
func checkEndpoint(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s: not an absolute URL", what)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%s: %s must use https", what, u.Host)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// discover finds the authorization server for spec's server, from the
// Bearer challenge of its 401 when there is one.
func discover(ctx context.Context, hc *http.Client, spec Server, bearer *challenge) (*discovery, error) {
	target := canonicalResource(spec.URL)
	u, err := url.Parse(spec.URL)
	if err != nil {
		return nil, errors.New("url: not a valid URL")
	}
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()

	var prm *resourceMetadata
	var prmErr error
	if rm := bearer.param("resource_metadata"); rm != "" {
		if err := checkEndpoint("resource_metadata", rm); err != nil {
			return nil, err
		}
		prm, prmErr = fetchResourceMetadata(ctx, hc, spec, rm)
		if prmErr != nil {
			return nil, fmt.Errorf("reading the protected resource metadata: %w", prmErr)
		}
	} else {
		var candidates []string
		if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
			candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
		}
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
		for _, c := range candidates {
			if prm, prmErr = fetchResourceMetadata(ctx, hc, spec, c); prm != nil {
				break
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}

	d := &discovery{resource: target}
	var issuers []string
	if prm != nil {
		if prm.Resource != "" {
			if !resourceCovers(prm.Resource, target) {
				return nil, fmt.Errorf("the server's protected resource metadata is for another resource (%q)", logkey.Clip(prm.Resource))
			}
			d.resource = prm.Resource // as the server names itself to its authorization server
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the server's protected resource metadata names no authorization server")
		}
		issuers = prm.AuthorizationServers
		d.scopes = prm.ScopesSupported
	} else {
		// No protected resource metadata: the 2025-03-26 revision, where
		// the server's origin is its authorization server.
		issuers = []string{origin}
	}
	if sc := bearer.param("scope"); sc != "" {
		d.scopes = strings.Fields(sc) // the challenge is authoritative
	}

	var errs []error
	for _, iss := range issuers {
		meta, err := fetchServerMetadata(ctx, hc, iss)
		if err == nil {
			d.issuer, d.meta = iss, *meta
			return d, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		errs = append(errs, err)
	}
	if prm == nil && prmErr != nil {
		errs = append([]error{fmt.Errorf("no protected resource metadata: %w", prmErr)}, errs...)
	}
	return nil, fmt.Errorf("discovering the authorization server: %w", errors.Join(errs...))
}

// resourceCovers reports whether the resource identifier res names target
// or a parent of it (same scheme and host, a path prefix at a segment
// boundary).
func resourceCovers(res, target string) bool {
	r, err1 := url.Parse(canonicalResource(res))
	t, err2 := url.Parse(target)
	if err1 != nil || err2 != nil || r.Scheme != t.Scheme || r.Host != t.Host {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	tp := strings.TrimSuffix(t.Path, "/")
	return rp == "" || rp == tp || strings.HasPrefix(tp, rp+"/")
}

// fetchResourceMetadata GETs a protected resource metadata document. The
// server's configured headers (other than Authorization, which an OAuth
// server has not) go with it when it is on the server's origin.
func fetchResourceMetadata(ctx context.Context, hc *http.Client, spec Server, target string) (*resourceMetadata, error) {
	var prm resourceMetadata
	if err := getJSON(ctx, hc, target, sameOriginHeaders(spec, target), &prm); err != nil {
		return nil, err
	}
	return &prm, nil
}

// sameOriginHeaders returns spec's headers when target is on the server's
// origin: a gateway in front of the server may need them.
func sameOriginHeaders(spec Server, target string) map[string]string {
	u, err1 := url.Parse(spec.URL)
	t, err2 := url.Parse(target)
	if err1 != nil || err2 != nil || !strings.EqualFold(u.Scheme, t.Scheme) || !strings.EqualFold(u.Host, t.Host) {
		return nil
	}
	return spec.Headers
}

// metadataURLs lists where an issuer's metadata may be, in the order the
// MCP specification gives.
func metadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, errors.New("not an absolute URL")
	}
	origin := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}, nil
}

// fetchServerMetadata finds and checks an authorization server's metadata.
func fetchServerMetadata(ctx context.Context, hc *http.Client, issuer string) (*serverMetadata, error) {
	if err := checkEndpoint("authorization server", issuer); err != nil {
		return nil, err
	}
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, fmt.Errorf("authorization server %q: %w", logkey.Clip(issuer), err)
	}
	var last error
	for _, m := range urls {
		var meta serverMetadata
		if err := getJSON(ctx, hc, m, nil, &meta); err != nil {
			last = err
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("the metadata of authorization server %q names another issuer (%q)", logkey.Clip(issuer), logkey.Clip(meta.Issuer))
		}
		if err := meta.check(); err != nil {
			return nil, fmt.Errorf("authorization server %q: %w", logkey.Clip(issuer), err)
		}
		return &meta, nil
	}
	return nil, fmt.Errorf("authorization server %q: no metadata found: %w", logkey.Clip(issuer), last)
}

func (m *serverMetadata) check() error {
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return errors.New("its metadata lacks the authorization or token endpoint")
	}
	for _, e := range []struct{ name, u string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if e.u == "" {
			continue
		}
		if err := checkEndpoint(e.name, e.u); err != nil {
			return err
		}
	}
	for _, c := range m.CodeChallengeMethodsSupported {
		if c == "S256" {
			return nil
		}
	}
	return errors.New("it does not offer PKCE with S256 (code_challenge_methods_supported), which MCP requires")
}

// getJSON GETs target and decodes its JSON body into v.
func getJSON(ctx context.Context, hc *http.Client, target string, headers map[string]string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return errors.New("building the request failed")
	}
	for k, val := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = val
			continue
		}
		req.Header.Set(k, val)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return authNetError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%s: HTTP %d %s", pathOf(target), resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("%s: not JSON (%s)", pathOf(target), mt)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, metadataLimit)).Decode(v); err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", pathOf(target), err)
	}
	return nil
}

// pathOf names a URL in a message by its host and path (never its query).
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "a URL"
	}
	return u.Host + u.EscapedPath()
}

// authNetError describes a failed request without quoting its URL (it may
// carry a code or a secret).
func authNetError(err error) error {
	var uErr *url.Error
	if errors.As(err, &uErr) {
		host := ""
		if u, perr := url.Parse(uErr.URL); perr == nil {
			host = u.Host
		}
		if errors.Is(uErr.Err, context.Canceled) || errors.Is(uErr.Err, context.DeadlineExceeded) {
			return uErr.Err
		}
		return fmt.Errorf("cannot reach %s: %v", host, uErr.Err)
	}
	return err
}
