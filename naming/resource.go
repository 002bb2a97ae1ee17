package naming

import (
	"cmp"
	"strings"
)

// schemePrefix is what every namespaced resource URI starts with.
const schemePrefix = URIScheme + "://"

// uiPrefix starts the URIs of MCP Apps (the io.modelcontextprotocol/ui
// extension), skillPrefix those of skills (io.modelcontextprotocol/skills).
// Hosts render only ui:// resources as apps and look for skills under
// skill://, so these keep their scheme and are namespaced inside it:
// "ui://<server>/<rest>" for a server's "ui://<rest>". The server's name
// takes the authority and the original authority becomes the first path
// segment, which is reversible because server names never hold a "/"; a
// skill's files stay inside its directory.
const (
	uiPrefix    = "ui://"
	skillPrefix = "skill://"
)

// keptScheme is the kept scheme uri starts with ("" for none).
func keptScheme(uri string) string {
	for _, p := range [...]string{uiPrefix, skillPrefix} {
		if hasPrefixFold(uri, p) {
			return p
		}
	}
	return ""
}

// ResourceURI returns the namespaced form of an upstream resource URI or URI
// template: "mcptrunk://" + server + "/" + uri, or for a ui:// (or
// skill://) URI "ui://" + server + "/" + the rest after "ui://".
//
// The original is kept verbatim, without escaping, so that a template like
// "demo://r/{id}" becomes "mcptrunk://srv/demo://r/{id}", the host's
// expansion of it yields "mcptrunk://srv/demo://r/42", and SplitResourceURI
// recovers "demo://r/42" exactly. Escaping would break that, because the
// host expands templates textually. An empty uri yields a URI that
// SplitResourceURI rejects; upstream URIs are never empty.
func ResourceURI(server, uri string) string {
	if p := keptScheme(uri); p != "" && len(uri) > len(p) {
		return uri[:len(p)] + server + "/" + uri[len(p):]
	}
	return schemePrefix + server + "/" + uri
}

// IsUIURI reports whether uri is an MCP App's ui:// URI.
func IsUIURI(uri string) bool { return hasPrefixFold(uri, uiPrefix) }

// IsSkillURI reports whether uri is a skill's skill:// URI (SEP-2640).
func IsSkillURI(uri string) bool { return hasPrefixFold(uri, skillPrefix) }

// SplitResourceURI is the inverse of ResourceURI: it returns
// (server, originalURI, true) for "mcptrunk://<server>/<rest>" where server
// is non-empty and matches [A-Za-z0-9_-]+ and rest is non-empty.
// Everything after the first "/" following the server is returned verbatim.
// "ui://<server>/<rest>" splits likewise into (server, "ui://<rest>"), as
// does skill://. The scheme match is case-insensitive, as URI schemes are;
// the server part and a kept scheme are returned as written.
func SplitResourceURI(u string) (server, uri string, ok bool) {
	prefix := cmp.Or(keptScheme(u), schemePrefix)
	if !hasPrefixFold(u, prefix) {
		return "", "", false
	}
	server, uri, found := strings.Cut(u[len(prefix):], "/")
	if !found || !isLegal(server) || uri == "" {
		return "", "", false
	}
	if prefix != schemePrefix {
		uri = u[:len(prefix)] + uri
	}
	return server, uri, true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
