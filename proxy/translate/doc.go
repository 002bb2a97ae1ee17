// Package translate converts, request by request, between a host and a
// server that may speak different revisions of MCP.
//
// It reads the reserved _meta of a request at the stateless revision
// (RequestMeta) and checks the shape of its params (RequiredString,
// OptionalObject), shapes a result for the revision it answers
// (StatelessResult, Result2025), answers the methods that revision
// removed, describes the trunk at either handshake (InitializeCapabilities,
// DiscoveredCapabilities), holds subscriptions/listen (Listens), and runs
// multi-round-trip requests: Fulfil asks a 2025-era host a 2026-07-28
// server's input requests as real requests, and Parking keeps a 2025
// server's call and its requests between a 2026-07-28 host's rounds.
//
// It is given what it needs as arguments (the host request's facts as a
// HostRequest value, the server as an Upstream, the way to ask the host as
// AskHost, a listen's session as a ListenSession) and knows nothing of the
// trunk or its sessions; a context carries only cancellation.
package translate
