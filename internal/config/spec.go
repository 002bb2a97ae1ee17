package config

import (
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/policy"
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
	defaultRestartWait    = 10 * time.Second

	defaultStartupWait   = 15 * time.Second
	defaultConcurrency   = DefaultConcurrency
	defaultMaxNameLength = 64
	minMaxNameLength     = 32
	maxMaxNameLength     = 256
)

// Timeouts per server. Zero fields mean the defaults, which Parse fills in:
// Connect 30s, List 30s, Call 120s, Restart 10s.
type Timeouts struct {
	Connect Duration `json:"connect,omitzero"`
	List    Duration `json:"list,omitzero"`
	Call    Duration `json:"call,omitzero"`
	// Restart bounds how long a request waits for the server while it
	// restarts (after a crash) before it fails naming why the server
	// went away; the request's own deadline bounds it too.
	Restart Duration `json:"restart,omitzero"`
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
	// Overrides reshape the server's tools and prompts for the model:
	// names, descriptions, annotations, argument defaults and fixed
	// arguments.
	Overrides Overrides `json:"overrides,omitzero"`
	// MaxResultBytes is what of one tool result reaches the model, in
	// bytes (0: all of it); past it the trunk keeps the whole for the
	// caller to read in pages. An override's own maxResultBytes wins.
	MaxResultBytes int      `json:"maxResultBytes,omitempty"`
	Timeouts       Timeouts `json:"timeouts,omitzero"`
	// OAuth tunes OAuth 2.1 for a remote server (see upstream/oauth); the zero
	// value discovers everything. Not allowed for stdio servers, nor next to
	// an Authorization header (which turns OAuth off).
	OAuth OAuthOptions `json:"oauth,omitzero"`
	// ProtocolVersion pins the MCP revision spoken to the server. "" (auto)
	// asks with server/discover and falls back to initialize at
	// protocol.Revision2025; a 2025 revision uses initialize only, at that
	// revision; protocol.Stateless uses server/discover only. Pinning is for
	// a server that mishandles the probe, or a test of one revision.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Lazy: the server is not started until a request needs it; its names
	// come from the catalog cache meanwhile (state sleeping). Parse fills
	// in trunk.lazy when the server does not say.
	Lazy bool `json:"lazy,omitempty"`
	// IdleTimeout stops the server (back to sleeping, names still listed)
	// after this long without a request, a subscription or a call in
	// flight; 0 never does. Parse fills in trunk.idleTimeout when the
	// server does not say; "0s" turns it off for one server.
	IdleTimeout Duration `json:"idleTimeout,omitzero"`
	// Namespace false exports the server's tools, prompts, resources and
	// templates under their own names and URIs, without the
	// mcp__<server>__ prefix or the mcptrunk:// scheme: for a host that
	// should see one server as it is (mcptrunk connect), or a few whose
	// names are known not to clash. Requests are then routed by looking the
	// name up in the catalog; a name another server also claims is
	// withheld from the later server. nil (the default) and true namespace.
	Namespace *bool `json:"namespace,omitempty"`
	// Scope is ScopeSession, ScopeCaller or "" (ScopeShared): whether
	// host sessions share one instance of the server.
	Scope string `json:"scope,omitempty"`
	// Credentials say whose credential the server's calls carry: shared
	// (the zero value) or per-user (credentials.go).
	Credentials Credentials `json:"credentials,omitzero"`
	// MaxInFlight caps the calls in flight to the server at once; 0 (the
	// default) does not. A call past the cap waits its turn, with at most
	// MaxQueued others (0: DefaultMaxQueued), within its own deadline and
	// timeouts.call, so that one busy caller cannot take every slot of a
	// slow server.
	MaxInFlight int `json:"maxInFlight,omitempty"`
	MaxQueued   int `json:"maxQueued,omitempty"`
	// Breaker, for a remote server, fails calls at once while the server
	// keeps failing, rather than having every caller wait its timeout.
	Breaker Breaker `json:"breaker,omitzero"`
	// Invalid is why the entry cannot be used, nil when it can: the server
	// is then reported failed with it and never started (unless disabled),
	// and the other fields are only what could be read.
	Invalid *EntryError `json:"-"`
}

// Unprefixed reports whether the server's names and URIs are exported as
// the server gives them ("namespace": false).
func (s Spec) Unprefixed() bool { return s.Namespace != nil && !*s.Namespace }

// Scopes of a server (Spec.Scope).
const (
	// ScopeShared (the default): one instance serves every host session.
	ScopeShared = "shared"
	// ScopeSession: with several host sessions (serve --http), each gets an
	// instance of its own, started at its first call and stopped when the
	// session ends: for servers whose state is one host's, such as roots.
	ScopeSession = "session"
	// ScopeCaller: with several host sessions, each signed-in caller
	// (subject) gets an instance of its own, shared by its sessions and
	// its stateless requests, stopped an idle time after its last session
	// ended; a session without identity is a caller of its own. What the
	// server sends on its own then reaches only that caller.
	ScopeCaller = "caller"
	// ScopeSetting is the server entry's key for the scope, for messages.
	ScopeSetting = "scope"
)

// PerSession reports whether each host session gets its own instance.
func (s Spec) PerSession() bool { return s.Scope == ScopeSession }

// PerCaller reports whether each caller gets its own instance.
func (s Spec) PerCaller() bool { return s.Scope == ScopeCaller }

// DefaultMaxQueued is how many calls may wait for a slot of a server with
// maxInFlight when its maxQueued is not set.
const DefaultMaxQueued = 64

// Breaker is a remote server's circuit breaker: after Failures
// consecutive calls that got no answer (a timeout, a transport error),
// calls fail at once for Cooldown; then one probe call is let through,
// and its answer closes the breaker. The zero value has no breaker.
type Breaker struct {
	Failures int      `json:"failures,omitempty"`
	Cooldown Duration `json:"cooldown,omitzero"` // Parse fills in DefaultBreakerCooldown
}

// DefaultBreakerCooldown is how long an open breaker fails calls before
// it lets a probe through, when breaker.cooldown is not set.
const DefaultBreakerCooldown = 30 * time.Second

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
	if (s.Invalid == nil) != (o.Invalid == nil) || s.Invalid != nil && s.Invalid.Error() != o.Invalid.Error() {
		return false
	}
	s.Invalid, o.Invalid = nil, nil
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
	s.Credentials.Scopes = nilIfEmptyStrings(s.Credentials.Scopes)
	if len(s.Overrides.Tools) == 0 {
		s.Overrides.Tools = nil
	}
	if len(s.Overrides.Prompts) == 0 {
		s.Overrides.Prompts = nil
	}
	if !s.Unprefixed() {
		s.Namespace = nil // true says what the default says
	}
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
	// CodeMode offers the run_code and code_api tools (trunk.codeMode).
	CodeMode CodeMode `json:"codeMode,omitzero"`
	// MaxMessageBytes bounds every message written to the host, measured
	// on the encoded line it reads (default DefaultMaxMessageBytes; the
	// config also takes it under its old name, maxResultBytes). Hosts read
	// messages up to a limit and one over it ends the host's whole
	// connection, every server's: an oversized result becomes an error
	// naming it, a list page is split, an oversized notification is dropped.
	MaxMessageBytes int `json:"maxMessageBytes,omitempty"`
	// Pin is how definitions are pinned (see internal/pin):
	// PinOff, PinWarn (the default: trust on first use, log later changes)
	// or PinEnforce (withhold whatever "mcptrunk pin" has not recorded).
	Pin string `json:"pin,omitempty"`
	// LockFile is the lockfile's path: trunk.lockFile, relative to the
	// config's directory, or LockFileName beside the config. Empty when the
	// config was not loaded from a file, which turns pinning off.
	LockFile string `json:"lockFile,omitempty"`
	// Lazy and IdleTimeout are the defaults of every server's lazy and
	// idleTimeout (see Spec).
	Lazy        bool     `json:"lazy,omitempty"`
	IdleTimeout Duration `json:"idleTimeout,omitzero"`
	// Audit is the audit log (trunk.audit); off when Audit.File is empty.
	Audit Audit `json:"audit,omitzero"`
	// HTTP is the streamable HTTP downstream (trunk.http); off when Listen
	// is empty and serve has no --http.
	HTTP HTTP `json:"http,omitzero"`
	// Metrics is the Prometheus listener (trunk.metrics); off when Listen
	// is empty and serve has no --metrics.
	Metrics Metrics `json:"metrics,omitzero"`
	// Policy decides, per caller, what each sees and may use; Profiles
	// are named views (/mcp/p/<name>, serve --profile). See
	// internal/policy.
	Policy   Policy                    `json:"policy,omitzero"`
	Profiles map[string]policy.Profile `json:"profiles,omitempty"`
	// ProfileOverrides are the profiles' own overrides ("overrides" in a
	// profile), by profile and then server (its name in mcpServers or its
	// identifier): set over the server's own for that profile's callers.
	ProfileOverrides map[string]map[string]Overrides `json:"profileOverrides,omitempty"`
	// Limits are the rules on how often callers may call (trunk.limits),
	// by name.
	Limits map[string]Limit `json:"limits,omitempty"`
	// State is where sign-ins, exchanged tokens and shared counts are
	// kept (trunk.state); in memory when not configured.
	State State `json:"state,omitzero"`
}

// Pinning modes (trunk.pin).
const (
	PinOff     = "off"
	PinWarn    = "warn"
	PinEnforce = "enforce"
)

// LockFileName is the lockfile's name beside the config.
const LockFileName = "mcptrunk.lock.json"

// DefaultConcurrency is how many servers start at once unless the config
// says otherwise. Starting is mostly waiting (a Node server spends ~400 ms
// getting to its first answer), so a typical setup starts in one wave and
// the host's first list comes after the slowest server, not after the sum;
// the bound only keeps a config of hundreds from spawning them all at once.
const DefaultConcurrency = 32

// DefaultMaxMessageBytes is the smallest read limit of the popular host
// SDKs (docs/host-limits.md): the TypeScript SDK's stdio transport closes
// the connection when more than 10 MiB (10,485,760 bytes) are buffered,
// counting the line with its newline and whatever of the next message came
// in the same read. One pipe read (64 KiB) less leaves room for that.
const DefaultMaxMessageBytes = 10<<20 - 64<<10

// MinMessageBytes is the least trunk.maxMessageBytes accepts: a limit below
// it would refuse ordinary lists and results.
const MinMessageBytes = 64 << 10

// Config is a parsed, expanded, validated configuration. Servers are sorted
// by Name.
type Config struct {
	Servers []Spec
	Trunk   TrunkOptions
	// Warnings are what in the file is probably a mistake but does not
	// stop it from loading: keys mcptrunk does not know (and no host is
	// known to use), each with the key it probably meant. Load starts each
	// with the file's path. serve logs them; check shows them, and check
	// --strict fails on them.
	Warnings []string
	// Notes say what Parse left out on purpose: an entry that runs
	// mcptrunk itself (the one install gives a host, when --config is
	// that host's file).
	Notes []string
}

// UsesOAuth reports whether mcptrunk uses OAuth for the server: a remote
// server ("http" or "sse") whose config sets no Authorization header and
// no per-user credentials but "oauth" ones (whose instance that lists the
// tools signs in as the trunk, "mcptrunk auth").
func (s Spec) UsesOAuth() bool {
	return (!s.PerUser() || s.Credentials.Mode == CredentialsOAuth) && (s.Type == TransportHTTP || s.Type == TransportSSE) && !hasAuthorizationHeader(s.Headers)
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
