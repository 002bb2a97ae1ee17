// Package protocol holds the facts of the MCP protocol that both sides of the
// trunk use: the revision spoken and the names of its HTTP headers. It is a
// leaf: constants only, no behaviour.
package protocol

// Version is the revision mcptrunk asks every upstream for. Pinning it avoids
// the discovery probe of newer revisions, which a server that does not know
// it ignores until a timeout.
const Version = "2025-11-25"

// The streamable HTTP transport's headers.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)
