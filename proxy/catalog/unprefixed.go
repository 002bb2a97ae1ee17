package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Unprefixed servers ("namespace": false) keep their own names and URIs, so
// nothing in a name says which server it is for: the catalog routes them by
// looking the name up. That every exported name has one owner is what the
// claims of claims.go make sure of as the catalog is built.

// unprefixedIndex routes the names and URIs of the unprefixed servers. A catalog
// has none when every server is namespaced, so the usual path pays nothing.
type unprefixedIndex struct {
	// servers are the configured unprefixed servers, in name order,
	// listed or not.
	servers []string
	// unprefixed holds every configured server: true when unprefixed.
	unprefixed map[string]bool
	// owners maps, per list, each name or URI an unprefixed server exports
	// to that server.
	owners [ListCount]map[string]string
	// templates are the unprefixed servers' resource templates, for a read
	// of a URI no server lists.
	templates []unprefixedTemplate
}

type unprefixedTemplate struct {
	server string
	tpl    naming.Template
}

// newUnprefixedIndex returns the index for servers, or nil when none of them is
// unprefixed.
func newUnprefixedIndex(servers []Server) *unprefixedIndex {
	p := &unprefixedIndex{unprefixed: make(map[string]bool, len(servers))}
	for _, s := range servers {
		unprefixed := s.Spec.Unprefixed()
		p.unprefixed[s.Name] = unprefixed
		if unprefixed {
			p.servers = append(p.servers, s.Name)
		}
	}
	if len(p.servers) == 0 {
		return nil
	}
	for l := range p.owners {
		p.owners[l] = map[string]string{}
	}
	return p
}

// add records what an unprefixed server exports in list l.
func (p *unprefixedIndex) add(l List, entries []Entry) {
	for _, e := range entries {
		p.owners[l][e.Exported] = e.Server
		if l != ListTemplates {
			continue
		}
		tpl, err := naming.ParseTemplate(e.Raw)
		if err == nil {
			p.templates = append(p.templates, unprefixedTemplate{e.Server, tpl})
		}
	}
}

// namespaced reports whether server is configured and namespaced, or is the
// trunk itself: a name that splits into it is that server's.
func (p *unprefixedIndex) namespaced(server string) bool {
	unprefixed, configured := p.unprefixed[server]
	return server == naming.TrunkServer || configured && !unprefixed
}

// unprefixed reports whether server's names and URIs reach the host as the
// server gives them: its results are not rewritten, nor its log messages'
// logger or its resources/updated URIs.
func (c *Catalog) Unprefixed(server string) bool {
	return c.unprefixedIndex != nil && c.unprefixedIndex.unprefixed[server]
}

// HasUnprefixed reports whether any configured server is unprefixed: if
// not, every name says whose it is.
func (c *Catalog) HasUnprefixed() bool { return c.unprefixedIndex != nil }

// exportUnprefixed is the catalog form of an unprefixed server's items: each
// exported under its own name or URI, its definition untouched.
func exportUnprefixed(server string, items []upstream.Item, renamed map[string]string) []Entry {
	out := make([]Entry, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Key] {
			continue // listed twice: the first wins, as for the others
		}
		seen[it.Key] = true
		out = append(out, Entry{Exported: shownName(it, renamed), Server: server, Raw: it.Key, Item: it.Raw})
	}
	return out
}

// NameOwner finds the server of a tool or prompt name the host sent: the
// unprefixed server that exports it, else the server the scheme splits out
// of it, else the unprefixed server pinning withholds it from (so that the
// refusal says why), else the only unprefixed server (which is asked, and
// says whether it has the name). ok is false when the name names no
// server.
func (c *Catalog) NameOwner(l List, name string) (server string, ok bool) {
	p := c.unprefixedIndex
	if p == nil { // every server is namespaced: the name says whose it is
		server, _, ok = c.Scheme.Split(name)
		return server, ok
	}
	if s, found := p.owners[l][name]; found {
		return s, true
	}
	if s, _, split := c.Scheme.Split(name); split && p.namespaced(s) {
		return s, true
	}
	kind := pin.Tools
	if l == ListPrompts {
		kind = pin.Prompts
	}
	if s, found := c.withheldFrom(kind, name); found {
		return s, true
	}
	if len(p.servers) == 1 {
		return p.servers[0], true
	}
	server, _, ok = c.Scheme.Split(name)
	return server, ok
}

// URIOwner finds the server of a resource URI the host sent and the URI as
// that server knows it: the unprefixed server that lists it, else the
// server a mcptrunk://<server>/ URI names, else the unprefixed server whose
// resource templates match it, else the unprefixed server pinning withholds
// it from, else the only unprefixed server. The error names the URI.
func (c *Catalog) URIOwner(uri string) (server, raw string, err error) {
	p := c.unprefixedIndex
	if p == nil {
		server, raw, ok := naming.SplitResourceURI(uri)
		if !ok {
			return "", "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown resource %q: mcptrunk's resource URIs look like %s://<server>/<uri>", uri, naming.URIScheme)
		}
		return server, raw, nil
	}
	if s, found := p.owners[ListResources][uri]; found {
		return s, uri, nil
	}
	if s, raw, split := naming.SplitResourceURI(uri); split && p.namespaced(s) {
		return s, raw, nil
	}
	var matched []string
	for _, t := range p.templates {
		if t.tpl.Matches(uri) && !slices.Contains(matched, t.server) {
			matched = append(matched, t.server)
		}
	}
	switch {
	case len(matched) == 1:
		return matched[0], uri, nil
	case len(matched) > 1:
		return "", "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "resource %q: it matches resource templates of the unprefixed servers %s, so which one to read it from is not known", uri, quoteList(matched))
	}
	if s, found := c.withheldFrom(pin.Resources, uri); found {
		return s, uri, nil
	}
	if len(p.servers) == 1 {
		return p.servers[0], uri, nil
	}
	return "", "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown resource %q: no server lists it, no resource template of the unprefixed servers %s matches it, and mcptrunk's other resource URIs look like %s://<server>/<uri>", uri, quoteList(p.servers), naming.URIScheme)
}

// refOwner finds the server of a completion reference's URI: a template an
// unprefixed server lists as it is, else as URIOwner does.
func (c *Catalog) refOwner(uri string) (server, raw string, err error) {
	if c.unprefixedIndex != nil {
		if s, found := c.unprefixedIndex.owners[ListTemplates][uri]; found {
			return s, uri, nil
		}
	}
	return c.URIOwner(uri)
}

// withheldFrom finds the unprefixed server pinning withholds an item from.
func (c *Catalog) withheldFrom(kind pin.Kind, key string) (string, bool) {
	for _, s := range c.unprefixedIndex.servers {
		if _, ok := c.Withheld[s][kind][key]; ok {
			return s, true
		}
	}
	return "", false
}

// ServerOf names the server a request's name or URI points at, "" when it
// points at none: for observers and messages, not for routing.
func (c *Catalog) ServerOf(method, item string) string {
	switch method {
	case "tools/call":
		s, _ := c.NameOwner(ListTools, item)
		return s
	case "prompts/get":
		s, _ := c.NameOwner(ListPrompts, item)
		return s
	}
	s, _, _ := c.URIOwner(item)
	return s
}

// UnknownName is the error for a tool or prompt name that names no server.
func (c *Catalog) UnknownName(kind, name string) error {
	if c.Restricted() {
		return c.Hidden(kind, name)
	}
	if c.unprefixedIndex != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown %s %q: none of the unprefixed servers %s exports it, and mcptrunk's other names look like %s<server>%s<name>%s",
			kind, name, quoteList(c.unprefixedIndex.servers), c.Scheme.Prefix, naming.Separator, c.DidYouMean(kind, name))
	}
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown %s %q: mcptrunk's names look like %s<server>%s<name>%s", kind, name, c.Scheme.Prefix, naming.Separator, c.DidYouMean(kind, name))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
