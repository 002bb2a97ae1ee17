// Package protocol holds the facts of the MCP protocol that both sides of the
// trunk use: the revisions, the reserved _meta keys and error codes of the
// stateless revision, and the HTTP header names. It is a leaf: constants and
// pure functions, no I/O.
package protocol

// The two live revisions. Revision2025 is the newest of the 2025 revisions
// (the initialize handshake, sessions and server-to-client requests);
// Stateless (and every later revision) has server/discover, per-request
// _meta, resultType and multi-round-trip results instead.
const (
	Revision2025 = "2025-11-25"
	Stateless    = "2026-07-28"
)

// Version is the revision mcptrunk asks for in an initialize request.
const Version = Revision2025

// Supported lists the revisions mcptrunk speaks, newest first: what
// server/discover reports and what initialize may agree to.
var Supported = []string{Stateless, Revision2025, "2025-06-18", "2025-03-26", "2024-11-05"}

// IsStateless reports whether a revision is the stateless one or later.
// Revisions are dates, so they compare as strings.
func IsStateless(version string) bool { return version >= Stateless }

// Known reports whether mcptrunk speaks the revision.
func Known(version string) bool {
	for _, v := range Supported {
		if v == version {
			return true
		}
	}
	return false
}

// MetaPrefix starts every _meta key the protocol reserves. Keys under it
// belong to one hop (one client and one server), so the trunk never passes
// another peer's on: it drops them and sets its own.
const MetaPrefix = "io.modelcontextprotocol/"

// The reserved _meta keys of the stateless revision.
const (
	MetaProtocolVersion    = MetaPrefix + "protocolVersion"    // request: the revision of this request
	MetaClientCapabilities = MetaPrefix + "clientCapabilities" // request: what the client can be asked during it
	MetaClientInfo         = MetaPrefix + "clientInfo"         // request: the client's name and version
	MetaLogLevel           = MetaPrefix + "logLevel"           // request: the least severe log message wanted
	MetaServerInfo         = MetaPrefix + "serverInfo"         // response: the server's name and version
	MetaSubscriptionID     = MetaPrefix + "subscriptionId"     // notification: the listen request it belongs to
)

// Methods and notifications of the stateless revision.
const (
	MethodDiscover            = "server/discover"
	MethodListen              = "subscriptions/listen"
	NotificationAcknowledged  = "notifications/subscriptions/acknowledged"
	ResultTypeComplete        = "complete"
	ResultTypeInputRequired   = "input_required"
	FieldResultType           = "resultType"
	FieldInputRequests        = "inputRequests"
	FieldInputResponses       = "inputResponses"
	FieldRequestState         = "requestState"
	FieldSupportedVersions    = "supportedVersions"
	ListenToolsListChanged    = "toolsListChanged"
	ListenPromptsListChanged  = "promptsListChanged"
	ListenResourcesChanged    = "resourcesListChanged"
	ListenResourceSubscribers = "resourceSubscriptions"
)

// RemovedInStateless are the methods and notifications the stateless
// revision removed: a request for one at that revision is method-not-found,
// and the trunk never sends one to a server that speaks it.
var RemovedInStateless = map[string]bool{
	"initialize":                       true,
	"notifications/initialized":        true,
	"ping":                             true,
	"logging/setLevel":                 true,
	"resources/subscribe":              true,
	"resources/unsubscribe":            true,
	"notifications/roots/list_changed": true,
}

// Error codes of the stateless revision.
const (
	CodeHeaderMismatch            = -32020 // an Mcp-* header disagrees with the body
	CodeMissingClientCapabilities = -32021 // the request needs a capability the client did not declare
	CodeUnsupportedVersion        = -32022 // data: {"supported": [...], "requested": "..."}
)

// The streamable HTTP transport's headers. Method and Name are sent at the
// stateless revision only: they mirror the body's method and its principal
// name (a tool's or prompt's name, a resource's URI).
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)
