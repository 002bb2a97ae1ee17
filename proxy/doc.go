// Package proxy is the trunk itself: the MCP server the host talks to. It
// builds the namespaced catalog from the upstreams' lists under the export
// policy, routes every request to the server that owns the name, rewrites
// names and URIs in what passes through, forwards what upstreams send the
// host, and runs the trunk's own tools. It reaches upstreams only through
// upstream.Fleet.
package proxy
