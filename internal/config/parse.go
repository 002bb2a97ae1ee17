package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

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
	MaxResult     json.RawMessage `json:"maxResultBytes"`
	Timeouts      json.RawMessage `json:"timeouts"`
	OAuth         json.RawMessage `json:"oauth"`
	Protocol      json.RawMessage `json:"protocolVersion"`
	Lazy          json.RawMessage `json:"lazy"`
	IdleTimeout   json.RawMessage `json:"idleTimeout"`
	Namespace     json.RawMessage `json:"namespace"`
	Scope         json.RawMessage `json:"scope"`
	Credentials   json.RawMessage `json:"credentials"`
	Overrides     json.RawMessage `json:"overrides"`
	MaxInFlight   json.RawMessage `json:"maxInFlight"`
	MaxQueued     json.RawMessage `json:"maxQueued"`
	Breaker       json.RawMessage `json:"breaker"`
}

type rawBreaker struct {
	Failures json.RawMessage `json:"failures"`
	Cooldown json.RawMessage `json:"cooldown"`
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
	Restart json.RawMessage `json:"restart"`
}

type rawTrunk struct {
	StartupWait   json.RawMessage `json:"startupWait"`
	Concurrency   json.RawMessage `json:"concurrency"`
	MaxNameLength json.RawMessage `json:"maxNameLength"`
	Prefix        json.RawMessage `json:"prefix"`
	ReadOnly      json.RawMessage `json:"readOnly"`
	ResourceTools json.RawMessage `json:"resourceTools"`
	ToolSearch    json.RawMessage `json:"toolSearch"`
	CodeMode      json.RawMessage `json:"codeMode"`
	MaxMessage    json.RawMessage `json:"maxMessageBytes"`
	MaxResult     json.RawMessage `json:"maxResultBytes"` // the old name of maxMessageBytes
	Pin           json.RawMessage `json:"pin"`
	LockFile      json.RawMessage `json:"lockFile"`
	Lazy          json.RawMessage `json:"lazy"`
	IdleTimeout   json.RawMessage `json:"idleTimeout"`
	Audit         json.RawMessage `json:"audit"`
	HTTP          json.RawMessage `json:"http"`
	Metrics       json.RawMessage `json:"metrics"`
	Policy        json.RawMessage `json:"policy"`
	Profiles      json.RawMessage `json:"profiles"`
	Limits        json.RawMessage `json:"limits"`
	State         json.RawMessage `json:"state"`
}

type rawAudit struct {
	File      json.RawMessage `json:"file"`
	Arguments json.RawMessage `json:"arguments"`
	MaxBytes  json.RawMessage `json:"maxBytes"`
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Parse reads a config from r, expands variables with lookup (os.LookupEnv
// in production; nil means os.LookupEnv), fills defaults and validates.
//
// What concerns the whole file (its JSON, mcpServers' form, a server's
// name, the trunk options) fails the parse. A server entry that cannot be
// used (an unset variable, a field of the wrong type) does not: its Spec
// comes back with Invalid set, and the trunk reports that server as failed
// while the others serve. Config.Unusable lists those.
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
	// The trunk options first: a server's lazy and idleTimeout default to
	// the trunk's.
	trunk, terrs := parseTrunk(rc.Trunk, lookup)
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
				if name == "" {
					errs = append(errs, errors.New(`server "": server name must not be empty`))
					continue
				}
				if runsTrunk(byName[name]) {
					cfg.Notes = append(cfg.Notes, selfNote(name))
					continue
				}
				// A name is the server's identity in every exported name,
				// so a bad one fails the load; a bad entry fails only its
				// server (Spec.Invalid), and the others serve.
				errs = append(errs, checkServerID(name, ids)...)
				spec, serrs := parseServer(name, byName[name], lookup, trunk)
				if len(serrs) > 0 {
					spec.Invalid = &EntryError{Server: name, Problems: serrs}
				}
				cfg.Servers = append(cfg.Servers, spec)
			}
		}
	}
	errs = append(errs, terrs...)
	errs = append(errs, checkProfileServers(trunk.Profiles, cfg.Servers)...)
	errs = append(errs, checkProfileOverrides(trunk.Profiles, trunk.ProfileOverrides, cfg.Servers)...)
	cfg.Trunk = trunk
	if len(errs) > 0 {
		// Every problem at once: the entries' too.
		for _, s := range cfg.Servers {
			if s.Invalid != nil {
				errs = append(errs, s.Invalid.Lines()...)
			}
		}
		return nil, errors.Join(errs...)
	}
	cfg.Warnings = unknownKeys(rc, data)
	return cfg, nil
}

// ParseAll is Parse for a config that must be usable as a whole: an entry
// that cannot be used is an error too. For a config made from flags
// (mcptrunk connect), and for checking a file's form.
func ParseAll(r io.Reader, lookup func(string) (string, bool)) (*Config, error) {
	cfg, err := Parse(r, lookup)
	if err != nil {
		return nil, err
	}
	if err := cfg.Unusable(); err != nil {
		return nil, err
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
	for i, w := range cfg.Warnings {
		cfg.Warnings[i] = path + ": " + w
	}
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for i := range cfg.Servers {
		resolvePaths(&cfg.Servers[i], dir)
		resolveCredentialsFile(&cfg.Servers[i], dir)
	}
	// The lockfile lives beside the config unless the config says where.
	switch lf := cfg.Trunk.LockFile; {
	case lf == "":
		cfg.Trunk.LockFile = filepath.Join(filepath.Dir(path), LockFileName)
	case !filepath.IsAbs(lf):
		cfg.Trunk.LockFile = filepath.Join(filepath.Dir(path), lf)
	}
	if tf := cfg.Trunk.HTTP.TokenFile; tf != "" && !filepath.IsAbs(tf) {
		cfg.Trunk.HTTP.TokenFile = filepath.Join(filepath.Dir(path), tf)
	}
	if kf := cfg.Trunk.HTTP.SigningKeyFile; kf != "" && !filepath.IsAbs(kf) {
		cfg.Trunk.HTTP.SigningKeyFile = filepath.Join(filepath.Dir(path), kf)
	}
	if af := cfg.Trunk.Audit.File; af != "" && !filepath.IsAbs(af) {
		cfg.Trunk.Audit.File = filepath.Join(filepath.Dir(path), af)
	}
	for _, f := range []*string{&cfg.Trunk.State.Path, &cfg.Trunk.State.KeyFile, &cfg.Trunk.State.PreviousKeyFile} {
		if *f != "" && !filepath.IsAbs(*f) {
			*f = filepath.Join(filepath.Dir(path), *f)
		}
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

// parseServer decodes, expands and validates one mcpServers entry; trunk
// gives the defaults of lazy and idleTimeout. The returned Spec is
// meaningful only when no errors are returned; each error names the field
// ("headers.Authorization: ..."), not the server.
func parseServer(name string, raw json.RawMessage, lookup func(string) (string, bool), trunk TrunkOptions) (Spec, []error) {
	p := &fieldErrs{}
	s := Spec{Name: name}
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
	s.Overrides = p.overrides(rs.Overrides, lookup)
	s.MaxResultBytes = p.resultBudget(rs.MaxResult, "maxResultBytes")
	s.Timeouts = p.timeouts(rs.Timeouts, "timeouts")
	s.ProtocolVersion = p.protocolVersion(rs.Protocol, "protocolVersion")
	s.Lazy = trunk.Lazy
	if !rawAbsent(rs.Lazy) {
		s.Lazy = p.boolean(rs.Lazy, "lazy")
	}
	s.IdleTimeout = trunk.IdleTimeout
	if !rawAbsent(rs.IdleTimeout) {
		s.IdleTimeout = p.duration(rs.IdleTimeout, "idleTimeout")
	}
	if !rawAbsent(rs.Namespace) {
		ns := p.boolean(rs.Namespace, "namespace")
		s.Namespace = &ns
	}
	if scope, ok := p.str(rs.Scope, "scope"); ok {
		switch scope {
		case "", ScopeShared:
		case ScopeSession, ScopeCaller:
			s.Scope = scope
		default:
			p.addf("scope", "must be %q, %q or %q, got %q", ScopeShared, ScopeCaller, ScopeSession, scope)
		}
	}

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
	if !rawAbsent(rs.Credentials) {
		p.credentials(rs.Credentials, &s, headers, !rawAbsent(rs.OAuth), lookup, trunk)
	}
	p.protection(rs, &s)
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
