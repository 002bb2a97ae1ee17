package naming

import "strings"

// schemePrefix is what every namespaced resource URI starts with.
const schemePrefix = URIScheme + "://"

// ResourceURI returns the namespaced form of an upstream resource URI or URI
// template: "mcptrunk://" + server + "/" + uri.
//
// The original is kept verbatim, without escaping, so that a template like
// "demo://r/{id}" becomes "mcptrunk://srv/demo://r/{id}", the host's
// expansion of it yields "mcptrunk://srv/demo://r/42", and SplitResourceURI
// recovers "demo://r/42" exactly. Escaping would break that, because the
// host expands templates textually. An empty uri yields a URI that
// SplitResourceURI rejects; upstream URIs are never empty.
func ResourceURI(server, uri string) string {
	return schemePrefix + server + "/" + uri
}

// SplitResourceURI is the inverse of ResourceURI: it returns
// (server, originalURI, true) for "mcptrunk://<server>/<rest>" where server
// is non-empty and matches [A-Za-z0-9_-]+ and rest is non-empty.
// Everything after the first "/" following the server is returned verbatim.
// The scheme match is case-insensitive, as URI schemes are; the server part
// is returned as written.
func SplitResourceURI(u string) (server, uri string, ok bool) {
	if len(u) < len(schemePrefix) || !strings.EqualFold(u[:len(schemePrefix)], schemePrefix) {
		return "", "", false
	}
	server, uri, found := strings.Cut(u[len(schemePrefix):], "/")
	if !found || !isLegal(server) || uri == "" {
		return "", "", false
	}
	return server, uri, true
}
