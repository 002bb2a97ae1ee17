// Package translate is what the trunk does between a host and a server
// that speak different revisions of MCP: the reserved _meta of a request
// at the stateless revision (RequestMeta), the shape of a result for the
// revision it answers (StatelessResult, LegacyResult), the methods that
// revision removed, and multi-round-trip requests: Fulfil asks a 2025-era
// host a 2026-07-28 server's input requests as real requests, and Parking
// keeps a 2025 server's call and its requests between a 2026-07-28 host's
// rounds. It is given what it needs as arguments (the host request's
// facts, the server as an Upstream, the way to ask the host as AskHost)
// and knows nothing of the trunk or its sessions.
package translate
