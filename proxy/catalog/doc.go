// Package catalog builds and holds the exported catalog: each item the
// trunk offers its hosts under its exported name, the server that owns a
// name or URI, and the views of it that callers are served.
//
// Build (from Input and Server values) applies the export policy (filters,
// read-only, tool search, the name budget) and the config's overrides,
// gives namespaced names and URIs, settles the claims that give every
// exported name of an unprefixed server ("namespace": false) one owner,
// holds each server's definitions against the lockfile (Pinner: what the
// lockfile withholds stays out of the catalog, which keeps why for the
// error a request for it gets), and splits lists into pages within the
// host's message limit. A Catalog rewrites the URIs inside results and
// notifications, ranks tool search, and is restricted to one caller's view
// (Restrict). It is an immutable value: it starts no goroutine and reads no
// server, so it is tested with tables; the trunk in package proxy decides
// when to build one. The Pinner is its one part with state: it reads the
// lockfile when a build asks it, and under warn records a server seen for
// the first time.
package catalog
