package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcptrunk/mcptrunk/naming"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Transport is the kind of connection to an upstream, a validated enum.
type Transport string

// Transports. The config also accepts "streamable-http", "streamableHttp"
// and "streamable_http" (any letter case) for TransportHTTP.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http" // streamable HTTP
	TransportSSE   Transport = "sse"
)

// parseTransport maps a config "type" value to a Transport.
func parseTransport(s string) (Transport, bool) {
	switch strings.ToLower(s) {
	case "stdio":
		return TransportStdio, true
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return TransportHTTP, true
	case "sse":
		return TransportSSE, true
	}
	return "", false
}

// Filter is an allow/deny list of glob patterns (path.Match syntax). The zero
// value allows everything.
type Filter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Allows reports whether name passes: denied if any Deny pattern matches;
// otherwise allowed if Allow is empty or any Allow pattern matches.
// Malformed patterns (rejected by Parse) never match.
func (f Filter) Allows(name string) bool {
	for _, p := range f.Deny {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	if len(f.Allow) == 0 {
		return true
	}
	for _, p := range f.Allow {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Default timeouts and trunk options filled in by Parse.
const (
	defaultConnectTimeout = 30 * time.Second
	defaultListTimeout    = 30 * time.Second
	defaultCallTimeout    = 120 * time.Second

	defaultStartupWait   = 15 * time.Second
	defaultConcurrency   = DefaultConcurrency
	defaultMaxNameLength = 64
	minMaxNameLength     = 32
	maxMaxNameLength     = 256
)

// Timeouts per server. Zero fields mean the defaults, which Parse fills in:
// Connect 30s, List 30s, Call 120s.
type Timeouts struct {
	Connect Duration `json:"connect,omitzero"`
	List    Duration `json:"list,omitzero"`
	Call    Duration `json:"call,omitzero"`
}

// Spec is one configured upstream server.
type Spec struct {
	Name          string            `json:"-"`              // the key in mcpServers
	Type          Transport         `json:"type,omitempty"` // defaults: stdio when command is set, http when url is set
	Command       string            `json:"command,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Env           map[string]string `json:"env,omitempty"` // merged over the trunk's own environment when the process is started (not here)
	Cwd           string            `json:"cwd,omitempty"`
	URL           string            `json:"url,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	Disabled      bool              `json:"disabled,omitempty"`
	Tools         Filter            `json:"tools,omitzero"`
	Prompts       Filter            `json:"prompts,omitzero"`
	Resources     Filter            `json:"resources,omitzero"`
	ReadOnlyTools []string          `json:"readOnlyTools,omitempty"`
	Timeouts      Timeouts          `json:"timeouts,omitzero"`
	// OAuth tunes OAuth 2.1 for a remote server (see oauth.go); the zero
	// value discovers everything. Not allowed for stdio servers, nor next to
	// an Authorization header (which turns OAuth off).
	OAuth OAuthOptions `json:"oauth,omitzero"`
}

// OAuthOptions are a remote server's optional OAuth settings.
type OAuthOptions struct {
	// ClientID (and ClientSecret, for a confidential client) of a client
	// registered with the authorization server beforehand; without it
	// mcptrunk registers itself dynamically (RFC 7591).
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// Scopes to ask for; by default those the server's 401 names, else
	// those its protected resource metadata lists.
	Scopes []string `json:"scopes,omitempty"`
	// CallbackPort is the port on 127.0.0.1 the browser is redirected to;
	// 0 picks a free one.
	CallbackPort int `json:"callbackPort,omitempty"`
}

// Equal reports whether two specs describe the same server (every field,
// including Name and Disabled, is compared; order in slices matters). Nil
// and empty maps or slices are equal.
func (s Spec) Equal(o Spec) bool {
	return reflect.DeepEqual(s.normalized(), o.normalized())
}

// normalized returns a copy of s with empty maps and slices set to nil.
func (s Spec) normalized() Spec {
	s.Args = nilIfEmptyStrings(s.Args)
	s.ReadOnlyTools = nilIfEmptyStrings(s.ReadOnlyTools)
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
	s.OAuth.Scopes = nilIfEmptyStrings(s.OAuth.Scopes)
	for _, f := range []*Filter{&s.Tools, &s.Prompts, &s.Resources} {
		f.Allow = nilIfEmptyStrings(f.Allow)
		f.Deny = nilIfEmptyStrings(f.Deny)
	}
	return s
}

func nilIfEmptyStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TrunkOptions are the proxy-wide settings under "trunk".
type TrunkOptions struct {
	StartupWait   Duration `json:"startupWait,omitzero"`    // default 15s: how long the first list request waits for upstreams to settle
	Concurrency   int      `json:"concurrency,omitempty"`   // default DefaultConcurrency: upstreams started at once; must be >= 1 when set; 0 -> default
	MaxNameLength int      `json:"maxNameLength,omitempty"` // default 64; when set must be between 32 and 256
	// Prefix starts every exported tool and prompt name (default "mcp__");
	// "" gives <server>__<name> for hosts that add a prefix of their own.
	Prefix string `json:"prefix"`
	// ReadOnly exports only tools that are read-only, by their server's
	// readOnlyHint or the server's readOnlyTools list.
	ReadOnly bool `json:"readOnly,omitempty"`
	// ResourceTools adds mcp__trunk__list_resources and read_resource, for
	// hosts that handle tools but not resources.
	ResourceTools bool `json:"resourceTools,omitempty"`
	// ToolSearch exports a search tool and a call tool instead of every
	// tool, to keep large catalogs out of the host's context.
	ToolSearch bool `json:"toolSearch,omitempty"`
	// MaxResultBytes bounds one result passed to the host (default
	// DefaultMaxResultBytes). A larger one is answered with an error naming
	// the server: hosts read messages up to a limit (16 MiB for the Go SDK)
	// and one over it breaks the host's whole connection, every server's.
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
}

// DefaultConcurrency is how many servers start at once unless the config
// says otherwise. Starting is mostly waiting (a Node server spends ~400 ms
// getting to its first answer), so a typical setup starts in one wave and
// the host's first list comes after the slowest server, not after the sum;
// the bound only keeps a config of hundreds from spawning them all at once.
const DefaultConcurrency = 32

// DefaultMaxResultBytes keeps every result within what common hosts read
// in one message (the Go SDK: 16 MiB), with room for the envelope.
const DefaultMaxResultBytes = 16_000_000

// Config is a parsed, expanded, validated configuration. Servers are sorted
// by Name.
type Config struct {
	Servers []Spec
	Trunk   TrunkOptions
}

// rawConfig is the top level of the config file. Unknown keys (such as
// Claude Desktop's "globalShortcut" or "preferences") are ignored.
type rawConfig struct {
	MCPServers json.RawMessage `json:"mcpServers"`
	Trunk      json.RawMessage `json:"trunk"`
}

// rawServer is one entry of "mcpServers". Unknown keys are ignored.
type rawServer struct {
	Type          json.RawMessage `json:"type"`
	Command       json.RawMessage `json:"command"`
	Args          json.RawMessage `json:"args"`
	Env           json.RawMessage `json:"env"`
	Cwd           json.RawMessage `json:"cwd"`
	URL           json.RawMessage `json:"url"`
	Headers       json.RawMessage `json:"headers"`
	Disabled      json.RawMessage `json:"disabled"`
	Tools         json.RawMessage `json:"tools"`
	Prompts       json.RawMessage `json:"prompts"`
	Resources     json.RawMessage `json:"resources"`
	ReadOnlyTools json.RawMessage `json:"readOnlyTools"`
	Timeouts      json.RawMessage `json:"timeouts"`
	OAuth         json.RawMessage `json:"oauth"`
}

type rawOAuth struct {
	ClientID     json.RawMessage `json:"clientId"`
	ClientSecret json.RawMessage `json:"clientSecret"`
	Scopes       json.RawMessage `json:"scopes"`
	CallbackPort json.RawMessage `json:"callbackPort"`
}

type rawFilter struct {
	Allow json.RawMessage `json:"allow"`
	Deny  json.RawMessage `json:"deny"`
}

type rawTimeouts struct {
	Connect json.RawMessage `json:"connect"`
	List    json.RawMessage `json:"list"`
	Call    json.RawMessage `json:"call"`
}

type rawTrunk struct {
	StartupWait   json.RawMessage `json:"startupWait"`
	Concurrency   json.RawMessage `json:"concurrency"`
	MaxNameLength json.RawMessage `json:"maxNameLength"`
	Prefix        json.RawMessage `json:"prefix"`
	ReadOnly      json.RawMessage `json:"readOnly"`
	ResourceTools json.RawMessage `json:"resourceTools"`
	ToolSearch    json.RawMessage `json:"toolSearch"`
	MaxResult     json.RawMessage `json:"maxResultBytes"`
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Parse reads a config from r, expands variables with lookup (os.LookupEnv
// in production; nil means os.LookupEnv), fills defaults and validates.
//
// All validation problems are reported at once, joined with errors.Join,
// one per line, each naming the server and field. Error messages never
// contain the values of variables, env entries or headers.
func Parse(r io.Reader, lookup func(string) (string, bool)) (*Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("config is empty (want a JSON object)")
	}
	var rc rawConfig
	if err := json.Unmarshal(data, &rc); err != nil {
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			line, col := syntaxPosition(data, se.Offset)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
		}
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, fmt.Errorf("config must be a JSON object, got %s", rawKind(data))
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}

	var errs []error
	cfg := &Config{}
	if k := rawKind(rc.MCPServers); k != "" && k != "null" {
		if k != "object" {
			errs = append(errs, fmt.Errorf("mcpServers: want object, got %s", k))
		} else {
			names, vals, err := decodeRawObject(rc.MCPServers)
			if err != nil {
				errs = append(errs, fmt.Errorf("mcpServers: %w", err))
			}
			byName := make(map[string]json.RawMessage, len(names))
			for i, name := range names {
				if _, dup := byName[name]; dup {
					errs = append(errs, fmt.Errorf("server %q: defined more than once in mcpServers", name))
				}
				byName[name] = vals[i]
			}
			names = sortedMapKeys(byName)
			ids := map[string]string{}
			for _, name := range names {
				spec, serrs := parseServer(name, byName[name], lookup)
				errs = append(errs, serrs...)
				if name != "" { // parseServer reports the empty name
					errs = append(errs, checkServerID(name, ids)...)
				}
				cfg.Servers = append(cfg.Servers, spec)
			}
		}
	}
	trunk, terrs := parseTrunk(rc.Trunk)
	errs = append(errs, terrs...)
	cfg.Trunk = trunk
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// Load opens path and calls Parse with os.LookupEnv. Every error line is
// prefixed with the path.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err // the path is added below; keep errors.Is(err, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	cfg, err := Parse(f, os.LookupEnv)
	if err != nil {
		return nil, prefixPathErr(path, err)
	}
	return cfg, nil
}

// prefixPathErr prefixes err, or each error joined in it, with p.
func prefixPathErr(p string, err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, fmt.Errorf("%s: %w", p, e))
		}
		return errors.Join(out...)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// Resolve finds the config path: the explicit flag value if non-empty; else
// $MCPTRUNK_CONFIG if non-empty; else ./mcptrunk.json if it exists; else
// $XDG_CONFIG_HOME/mcptrunk/config.json if it exists (XDG_CONFIG_HOME
// defaulting to $HOME/.config, and being ignored when not absolute, as the
// XDG spec says). Explicit paths are returned without checking that they
// exist, so that Load reports the real error. getenv and exists are
// injected for tests (os.Getenv and a stat-based check in production).
func Resolve(flagValue string, getenv func(string) string, exists func(string) bool) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := getenv("MCPTRUNK_CONFIG"); p != "" {
		return p, nil
	}
	looked := []string{"$MCPTRUNK_CONFIG (not set)"}
	const local = "./mcptrunk.json"
	if exists(local) {
		return local, nil
	}
	looked = append(looked, local)
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		base = ""
		if home := getenv("HOME"); home != "" {
			base = filepath.Join(home, ".config")
		}
	}
	if base != "" {
		p := filepath.Join(base, "mcptrunk", "config.json")
		if exists(p) {
			return p, nil
		}
		looked = append(looked, p)
	} else {
		looked = append(looked, "$XDG_CONFIG_HOME/mcptrunk/config.json (neither XDG_CONFIG_HOME nor HOME is set)")
	}
	return "", fmt.Errorf("no config file found; looked at: %s", strings.Join(looked, ", "))
}

// fieldErrs collects validation errors for one server or for the trunk
// options.
type fieldErrs struct {
	prefix string // e.g. `server "x": `
	errs   []error
}

func (p *fieldErrs) addf(field, format string, args ...any) {
	p.add(field, fmt.Errorf(format, args...))
}

func (p *fieldErrs) add(field string, err error) {
	if field == "" {
		p.errs = append(p.errs, fmt.Errorf("%s%w", p.prefix, err))
		return
	}
	p.errs = append(p.errs, fmt.Errorf("%s%s: %w", p.prefix, field, err))
}

// wrongType records that field has the wrong JSON type. The value itself is
// not included: it may be a secret.
func (p *fieldErrs) wrongType(field, want string, raw []byte) {
	p.addf(field, "want %s, got %s", want, rawKind(raw))
}

// rawAbsent reports whether raw is a missing field or JSON null.
func rawAbsent(raw []byte) bool {
	k := rawKind(raw)
	return k == "" || k == "null"
}

// str decodes a string field. ok is false if it had the wrong type.
func (p *fieldErrs) str(raw json.RawMessage, field string) (s string, ok bool) {
	if rawAbsent(raw) {
		return "", true
	}
	if rawKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		p.wrongType(field, "string", raw)
		return "", false
	}
	return s, true
}

// strs decodes an array of strings; each bad element is reported.
func (p *fieldErrs) strs(raw json.RawMessage, field string) ([]string, bool) {
	if rawAbsent(raw) {
		return nil, true
	}
	var elems []json.RawMessage
	if rawKind(raw) != "array" || json.Unmarshal(raw, &elems) != nil {
		p.wrongType(field, "array of strings", raw)
		return nil, false
	}
	out := make([]string, 0, len(elems))
	ok := true
	for i, e := range elems {
		s, eok := p.str(e, fmt.Sprintf("%s[%d]", field, i))
		ok = ok && eok
		out = append(out, s)
	}
	return out, ok
}

// strMap decodes an object of strings; each bad value is reported.
func (p *fieldErrs) strMap(raw json.RawMessage, field string) (map[string]string, bool) {
	if rawAbsent(raw) {
		return nil, true
	}
	var elems map[string]json.RawMessage
	if rawKind(raw) != "object" || json.Unmarshal(raw, &elems) != nil {
		p.wrongType(field, "object of strings", raw)
		return nil, false
	}
	out := make(map[string]string, len(elems))
	ok := true
	for _, k := range sortedMapKeys(elems) {
		s, eok := p.str(elems[k], keyField(field, k))
		ok = ok && eok
		out[k] = s
	}
	return out, ok
}

func (p *fieldErrs) boolean(raw json.RawMessage, field string) bool {
	if rawAbsent(raw) {
		return false
	}
	var b bool
	if rawKind(raw) != "boolean" || json.Unmarshal(raw, &b) != nil {
		p.wrongType(field, "boolean", raw)
	}
	return b
}

func (p *fieldErrs) integer(raw json.RawMessage, field string) (int, bool) {
	if rawAbsent(raw) {
		return 0, true
	}
	var n int
	if rawKind(raw) != "number" || json.Unmarshal(raw, &n) != nil {
		p.wrongType(field, "integer", raw)
		return 0, false
	}
	return n, true
}

func (p *fieldErrs) duration(raw json.RawMessage, field string) Duration {
	if rawAbsent(raw) {
		return 0
	}
	var d Duration
	if err := d.UnmarshalJSON(raw); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			p.addf(field, `want a duration string such as "30s", got %s`, rawKind(raw))
		} else {
			p.add(field, err)
		}
		return 0
	}
	return d
}

// object decodes an object into v (a struct of json.RawMessage fields).
func (p *fieldErrs) object(raw json.RawMessage, field string, v any) bool {
	if rawAbsent(raw) {
		return false
	}
	if rawKind(raw) != "object" || json.Unmarshal(raw, v) != nil {
		p.wrongType(field, "object", raw)
		return false
	}
	return true
}

// filter decodes and validates an allow/deny filter.
func (p *fieldErrs) filter(raw json.RawMessage, field string) Filter {
	var rf rawFilter
	if !p.object(raw, field, &rf) {
		return Filter{}
	}
	allow, _ := p.strs(rf.Allow, field+".allow")
	deny, _ := p.strs(rf.Deny, field+".deny")
	p.patterns(allow, field+".allow")
	p.patterns(deny, field+".deny")
	return Filter{Allow: nilIfEmptyStrings(allow), Deny: nilIfEmptyStrings(deny)}
}

func (p *fieldErrs) patterns(pats []string, field string) {
	for i, pat := range pats {
		f := fmt.Sprintf("%s[%d]", field, i)
		if pat == "" {
			p.addf(f, "empty pattern")
			continue
		}
		if _, err := path.Match(pat, ""); err != nil {
			p.addf(f, "bad glob pattern %q: %w", pat, err)
		}
	}
}

func (p *fieldErrs) timeouts(raw json.RawMessage, field string) Timeouts {
	var t Timeouts
	var rt rawTimeouts
	if p.object(raw, field, &rt) {
		t.Connect = p.duration(rt.Connect, field+".connect")
		t.List = p.duration(rt.List, field+".list")
		t.Call = p.duration(rt.Call, field+".call")
	}
	if t.Connect == 0 {
		t.Connect = Duration(defaultConnectTimeout)
	}
	if t.List == 0 {
		t.List = Duration(defaultListTimeout)
	}
	if t.Call == 0 {
		t.Call = Duration(defaultCallTimeout)
	}
	return t
}

// expand expands variables in s, recording an error naming field on failure.
func (p *fieldErrs) expand(field, s string, lookup func(string) (string, bool)) (string, bool) {
	v, err := Expand(s, lookup)
	if err != nil {
		p.add(field, err)
		return "", false
	}
	return v, true
}

// parseServer decodes, expands and validates one mcpServers entry. The
// returned Spec is meaningful only when no errors are returned.
func parseServer(name string, raw json.RawMessage, lookup func(string) (string, bool)) (Spec, []error) {
	p := &fieldErrs{prefix: fmt.Sprintf("server %q: ", name)}
	s := Spec{Name: name}
	if name == "" {
		p.addf("", "server name must not be empty")
	}
	var rs rawServer
	if rawKind(raw) != "object" || json.Unmarshal(raw, &rs) != nil {
		p.addf("", "want object, got %s", rawKind(raw))
		return s, p.errs
	}

	typStr, okT := p.str(rs.Type, "type")
	cmd, okC := p.str(rs.Command, "command")
	rawURL, okU := p.str(rs.URL, "url")
	args, _ := p.strs(rs.Args, "args")
	env, _ := p.strMap(rs.Env, "env")
	cwd, _ := p.str(rs.Cwd, "cwd")
	headers, _ := p.strMap(rs.Headers, "headers")
	s.Disabled = p.boolean(rs.Disabled, "disabled")
	s.Tools = p.filter(rs.Tools, "tools")
	s.Prompts = p.filter(rs.Prompts, "prompts")
	s.Resources = p.filter(rs.Resources, "resources")
	readOnly, _ := p.strs(rs.ReadOnlyTools, "readOnlyTools")
	for i, t := range readOnly {
		if t == "" {
			p.addf(fmt.Sprintf("readOnlyTools[%d]", i), "empty tool name")
		}
	}
	s.ReadOnlyTools = nilIfEmptyStrings(readOnly)
	s.Timeouts = p.timeouts(rs.Timeouts, "timeouts")

	// Transport. Skipped when one of its inputs had the wrong JSON type, so
	// that one mistake does not produce a cascade of errors.
	hasCmd, hasURL := cmd != "", rawURL != ""
	if okT && okC && okU {
		typeOK := true
		if typStr != "" {
			s.Type, typeOK = parseTransport(typStr)
			if !typeOK {
				p.addf("type", "unknown transport %q (want stdio, http or sse)", typStr)
			}
		}
		switch {
		case hasCmd && hasURL:
			p.addf("", `"command" and "url" are mutually exclusive`)
		case s.Type == TransportStdio && !hasCmd:
			p.addf("command", `required for type "stdio"`)
		case (s.Type == TransportHTTP || s.Type == TransportSSE) && !hasURL:
			p.addf("url", "required for type %q", string(s.Type))
		case !hasCmd && !hasURL:
			p.addf("", `one of "command" or "url" is required`)
		}
		if s.Type == "" && typeOK {
			if hasCmd {
				s.Type = TransportStdio
			} else if hasURL {
				s.Type = TransportHTTP
			}
		}
	}

	// Variable expansion: command, args, env values, cwd, url, header values.
	var ok bool
	if s.Command, ok = p.expand("command", cmd, lookup); ok && hasCmd {
		if s.Command == "" {
			p.addf("command", "empty after variable expansion")
		} else if strings.ContainsRune(s.Command, 0) {
			p.addf("command", "contains a NUL byte")
		}
	}
	if len(args) > 0 {
		s.Args = make([]string, len(args))
		for i, a := range args {
			f := fmt.Sprintf("args[%d]", i)
			if s.Args[i], ok = p.expand(f, a, lookup); ok && strings.ContainsRune(s.Args[i], 0) {
				p.addf(f, "contains a NUL byte")
			}
		}
	}
	if len(env) > 0 {
		s.Env = make(map[string]string, len(env))
		for _, k := range sortedMapKeys(env) {
			f := keyField("env", k)
			if k == "" || strings.ContainsAny(k, "=\x00") {
				p.addf("env", "invalid variable name %q", k)
			}
			if s.Env[k], ok = p.expand(f, env[k], lookup); ok && strings.ContainsRune(s.Env[k], 0) {
				p.addf(f, "value contains a NUL byte")
			}
		}
	}
	s.Cwd, _ = p.expand("cwd", cwd, lookup)
	if u, ok := p.expand("url", rawURL, lookup); ok {
		s.URL = u
		if hasURL {
			p.checkURL(u)
		}
	}
	if len(headers) > 0 {
		s.Headers = make(map[string]string, len(headers))
		for _, k := range sortedMapKeys(headers) {
			f := keyField("headers", k)
			if !validHeaderName(k) {
				p.addf("headers", "invalid header name %q", k)
			}
			if s.Headers[k], ok = p.expand(f, headers[k], lookup); ok && strings.ContainsAny(s.Headers[k], "\r\n\x00") {
				p.addf(f, "value contains a line break or NUL byte")
			}
		}
	}
	if !rawAbsent(rs.OAuth) {
		s.OAuth = p.oauth(rs.OAuth, lookup)
		switch {
		case s.Type == TransportStdio:
			p.addf("oauth", `only for remote servers (type "http" or "sse")`)
		case hasAuthorizationHeader(headers):
			p.addf("oauth", "an Authorization header is configured too; remove one of them (the header turns OAuth off)")
		}
	}
	return s, p.errs
}

// oauth decodes, expands and validates the "oauth" object. Values are never
// quoted in errors: the client secret is one.
func (p *fieldErrs) oauth(raw json.RawMessage, lookup func(string) (string, bool)) OAuthOptions {
	var o OAuthOptions
	var ro rawOAuth
	if !p.object(raw, "oauth", &ro) {
		return o
	}
	id, _ := p.str(ro.ClientID, "oauth.clientId")
	secret, _ := p.str(ro.ClientSecret, "oauth.clientSecret")
	o.ClientID, _ = p.expand("oauth.clientId", id, lookup)
	o.ClientSecret, _ = p.expand("oauth.clientSecret", secret, lookup)
	for _, f := range []struct{ name, v string }{{"oauth.clientId", o.ClientID}, {"oauth.clientSecret", o.ClientSecret}} {
		if strings.ContainsAny(f.v, "\r\n\x00") {
			p.addf(f.name, "contains a line break or NUL byte")
		}
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		p.addf("oauth.clientSecret", "needs oauth.clientId")
	}
	scopes, _ := p.strs(ro.Scopes, "oauth.scopes")
	for i, sc := range scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
			p.addf(fmt.Sprintf("oauth.scopes[%d]", i), "must be one scope: not empty, no spaces or quotes")
		}
	}
	o.Scopes = nilIfEmptyStrings(scopes)
	if n, ok := p.integer(ro.CallbackPort, "oauth.callbackPort"); ok {
		if n < 0 || n > 65535 {
			p.addf("oauth.callbackPort", "must be a port number (1-65535, or 0 for any free port), got %d", n)
		} else {
			o.CallbackPort = n
		}
	}
	return o
}

// UsesOAuth reports whether mcptrunk uses OAuth for the server: a remote
// server ("http" or "sse") whose config sets no Authorization header.
func (s Spec) UsesOAuth() bool {
	return (s.Type == TransportHTTP || s.Type == TransportSSE) && !hasAuthorizationHeader(s.Headers)
}

// hasAuthorizationHeader reports whether headers set Authorization (in any
// letter case).
func hasAuthorizationHeader(headers map[string]string) bool {
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// checkURL validates an expanded url without ever quoting it: it may carry
// a secret (an API key in the query, or user:password).
func (p *fieldErrs) checkURL(u string) {
	if u == "" {
		p.addf("url", "empty after variable expansion")
		return
	}
	pu, err := url.Parse(u)
	if err != nil {
		p.addf("url", "not a valid URL")
		return
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		p.addf("url", "must be an absolute http:// or https:// URL")
		return
	}
	if pu.Host == "" {
		p.addf("url", "missing host")
	}
}

// parseTrunk decodes, defaults and validates the "trunk" options. A zero
// (or absent) value means the default.
func parseTrunk(raw json.RawMessage) (TrunkOptions, []error) {
	p := &fieldErrs{}
	var t TrunkOptions
	var rt rawTrunk
	if !rawAbsent(raw) {
		if rawKind(raw) != "object" || json.Unmarshal(raw, &rt) != nil {
			p.addf("trunk", "want object, got %s", rawKind(raw))
		}
	}
	t.StartupWait = p.duration(rt.StartupWait, "trunk.startupWait")
	if t.StartupWait == 0 {
		t.StartupWait = Duration(defaultStartupWait)
	}
	if n, ok := p.integer(rt.Concurrency, "trunk.concurrency"); ok {
		switch {
		case n == 0: // absent or explicitly 0
			t.Concurrency = defaultConcurrency
		case n < 1:
			p.addf("trunk.concurrency", "must be >= 1, got %d", n)
		default:
			t.Concurrency = n
		}
	}
	if n, ok := p.integer(rt.MaxNameLength, "trunk.maxNameLength"); ok {
		switch {
		case n == 0: // absent or explicitly 0
			t.MaxNameLength = defaultMaxNameLength
		case n < minMaxNameLength || n > maxMaxNameLength:
			p.addf("trunk.maxNameLength", "must be between %d and %d, got %d", minMaxNameLength, maxMaxNameLength, n)
		default:
			t.MaxNameLength = n
		}
	}
	t.Prefix = naming.Prefix
	if !rawAbsent(rt.Prefix) {
		if prefix, ok := p.str(rt.Prefix, "trunk.prefix"); ok {
			if err := naming.CheckPrefix(prefix); err != nil {
				p.add("trunk.prefix", err)
			}
			t.Prefix = prefix
		}
	}
	t.ReadOnly = p.boolean(rt.ReadOnly, "trunk.readOnly")
	t.ResourceTools = p.boolean(rt.ResourceTools, "trunk.resourceTools")
	t.ToolSearch = p.boolean(rt.ToolSearch, "trunk.toolSearch")
	t.MaxResultBytes = DefaultMaxResultBytes
	if n, ok := p.integer(rt.MaxResult, "trunk.maxResultBytes"); ok && n != 0 {
		if n < 1024 {
			p.addf("trunk.maxResultBytes", "must be at least 1024, got %d", n)
		}
		t.MaxResultBytes = n
	}
	return t, p.errs
}

// rawKind names the JSON type of raw: "object", "array", "string",
// "number", "boolean", "null", or "" when raw is empty (a missing field).
func rawKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// decodeRawObject returns the keys and values of a JSON object in document
// order, duplicates included.
func decodeRawObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, nil, err
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, vals, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return keys, vals, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals, nil
}

// syntaxPosition converts a json.SyntaxError offset (bytes read when the error was
// found) to a 1-based line and column (in characters) of the offending byte.
func syntaxPosition(data []byte, offset int64) (line, col int) {
	pos := int(offset) - 1
	pos = max(0, min(pos, len(data)))
	before := data[:pos]
	line = 1 + bytes.Count(before, []byte("\n"))
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	col = 1 + utf8.RuneCount(before[lineStart:])
	return line, col
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// keyField formats the path of a map entry: headers.Authorization, or
// headers["odd key"] when the key is not a plain identifier.
func keyField(field, key string) string {
	plain := key != ""
	for _, c := range key {
		if !(c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return field + "." + key
	}
	return fmt.Sprintf("%s[%q]", field, key)
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// checkServerID applies the naming rules to a server's name (no "__", not
// "trunk", ...) and rejects two names that normalise to the same id; ids
// maps the ids seen so far to their names.
func checkServerID(name string, ids map[string]string) []error {
	id, err := naming.ServerID(name)
	if err != nil {
		return []error{err}
	}
	if other, dup := ids[id]; dup {
		return []error{fmt.Errorf("server %q: its name collides with server %q (both become %q in exported names)", name, other, id)}
	}
	ids[id] = name
	return nil
}
