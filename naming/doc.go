// Package naming defines how mcptrunk maps upstream MCP servers' items into
// its single, aggregated namespace, and how it maps them back.
//
// A proxy that merges many servers must give every tool and prompt a name
// that is unique across all servers, acceptable to hosts (which commonly
// restrict names to [A-Za-z0-9_-] and about 64 characters), and that can be
// split back into "which server, which item" without a lookup table that
// could drift. The scheme is
//
//	mcp__<server>__<item>
//
// Server ids never contain "__" and never end in '_', so the first "__" after
// the "mcp__" prefix always ends the server part, and items may contain
// anything legal, including "__". Resources keep their original URI verbatim
// behind a namespacing prefix: mcptrunk://<server>/<original-uri>.
//
// A server configured with "namespace": false keeps its own names and URIs;
// the proxy then routes them by looking them up in its catalog, and
// ParseTemplate tells which server's resource template a URI it does not
// list fits.
//
// Everything here is a pure function of its arguments so that the proxy, its
// tests and its tools agree on names without sharing state.
//
// Example:
//
//	id, err := naming.ServerID("brave search") // "brave_search"
//	if err != nil {
//		return err
//	}
//	names, err := naming.Assign(id, []string{"web.search", "web_search"}, 0)
//	// names["web_search"] == "mcp__brave_search__web_search"
//	// names["web.search"] == "mcp__brave_search__web_search_15f83c80" (sha256 prefix)
//	server, item, ok := naming.SplitMCPName(names["web_search"])
//	// server == "brave_search", item == "web_search", ok == true
//
//	u := naming.ResourceURI(id, "file:///tmp/x") // "mcptrunk://brave_search/file:///tmp/x"
//	server, orig, ok := naming.SplitResourceURI(u)  // "brave_search", "file:///tmp/x", true
package naming
