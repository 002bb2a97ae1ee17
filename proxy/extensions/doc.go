// Package extensions carries MCP extensions across the trunk: what a host
// and a server declare in the `extensions` member of capabilities (each
// extension by its identifier, such as "io.modelcontextprotocol/ui", with
// its settings), and what the trunk declares back.
//
// What the trunk does for every extension, known to it or not:
//   - a host's declared extensions are recorded with each of its requests
//     (translate.HostRequest.Caps: initialize's capabilities for a
//     2025-era host, the request's clientCapabilities in _meta at
//     2026-07-28; Of reads them) and reach every server as the host
//     declared them (Key is among the capabilities the trunk forwards);
//   - the trunk declares an extension to a host when at least one ready
//     server declares it (Union), with the settings of the first server in
//     name order, unless the extension says how its settings merge.
//
// An extension the trunk must do more for (MCP Apps, Tasks) gets a file of
// its own here: its identifier, the merge of its settings (merges), and
// the rewriting or routing it needs, which the rest of the trunk calls
// through this package.
package extensions
