// Package catalog builds what the trunk exports from its servers' items:
// the export policy (filters, read-only, tool search, the name budget),
// namespaced names and URIs, the claims that give every exported name of
// an unprefixed server ("namespace": false) one owner, pinning against the
// lockfile, pages and cursors within the host's message limit, the lookup
// of a name's or URI's owner, the rewriting of URIs inside results, and
// tool search's ranking. A Catalog is an immutable value built from values
// (Server, Input): it starts no goroutine and reads no server, so it is
// tested with tables; the trunk in package proxy decides when to build one.
package catalog
