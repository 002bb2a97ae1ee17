package catalog

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// A shared trunk shows each caller the part of the catalog trunk.policy
// and its profile admit: a view, built from the catalog by Restrict and
// then served, searched and routed exactly as the whole one is. Whatever
// the view leaves out is missing for that caller, with one answer whether
// the item is forbidden, filtered or does not exist: no error may tell a
// caller that something it cannot see is there (see UnknownName).

// kinds are the policy's word for each list's items.
var kinds = [ListCount]string{ListTools: "tool", ListPrompts: "prompt", ListResources: "resource", ListTemplates: "template"}

// itemOf is an entry as the policy sees it.
func itemOf(l List, e Entry) policy.Item {
	it := policy.Item{Server: e.Server, Kind: kinds[l], Name: e.Raw, Exported: e.Exported}
	if l == ListTools {
		if start, end, found, err := rawjson.FieldSpan(e.Item, "annotations"); err == nil && found {
			_ = json.Unmarshal(e.Item[start:end], &it.Annotations) // not an object: no hints given
		}
	}
	return it
}

// Restrict is the catalog as one caller sees it: the entries keep admits.
// Routing is the catalog's own (a name still splits to its server), but
// every route the view leaves out is unknown to the caller.
func (c *Catalog) Restrict(keep func(policy.Item) bool) *Catalog {
	v := &Catalog{
		Scheme: c.Scheme, Tools: map[string]map[string]string{}, Prompts: map[string]map[string]string{},
		unprefixedIndex: c.unprefixedIndex, Withheld: c.Withheld, maxPage: c.maxPage, keep: keep, shown: map[string]bool{},
	}
	// Each item is decided once: a tool is in the list and among the
	// searchable ones, and in the routes.
	type key struct {
		l                List
		server, exported string
	}
	admitted := map[key]bool{}
	v.shown = map[string]bool{}
	admit := func(l List, e Entry) bool {
		k := key{l, e.Server, e.Exported}
		ok, seen := admitted[k]
		if !seen {
			ok = keep(itemOf(l, e))
			admitted[k] = ok
			if ok {
				v.shown[e.Server] = true
			}
		}
		return ok
	}
	for l := range ListCount {
		for _, e := range c.Lists[l] {
			if admit(l, e) {
				v.Lists[l] = append(v.Lists[l], e)
			}
		}
	}
	for _, e := range c.Searchable {
		if admit(ListTools, e) {
			v.Searchable = append(v.Searchable, e)
		}
	}
	// The routes hold what the lists and the searchable tools hold; a
	// route to anything else would not have been decided, and stays out.
	for _, r := range []struct {
		l        List
		from, to map[string]map[string]string
	}{{ListTools, c.Tools, v.Tools}, {ListPrompts, c.Prompts, v.Prompts}} {
		for server, names := range r.from {
			for exported, raw := range names {
				if admitted[key{r.l, server, exported}] {
					if r.to[server] == nil {
						r.to[server] = map[string]string{}
					}
					r.to[server][exported] = raw
				}
			}
		}
	}
	v.relisted = map[string][ListCount]uint64{}
	for server := range v.shown {
		if n, ok := c.relisted[server]; ok {
			v.relisted[server] = n
		}
	}
	for name, entries := range c.bare {
		for _, e := range entries {
			if admitted[key{ListTools, e.Server, e.Exported}] {
				if v.bare == nil {
					v.bare = map[string][]Entry{}
				}
				v.bare[name] = append(v.bare[name], e)
			}
		}
	}
	return v
}

// Restricted reports whether this is one caller's view.
func (c *Catalog) Restricted() bool { return c.keep != nil }

// Shows reports whether the caller of a view may hear of a server at all:
// the view holds one of its items (mcptrunk's own count for "trunk"). A
// server with nothing listed yet (starting, failed before its first list)
// is shown in the whole catalog only, since no rule has decided any of
// its items. The whole catalog shows every server.
func (c *Catalog) Shows(server string) bool { return c.keep == nil || c.shown[server] }

// Admits reports whether the caller of a view may use an item the view
// does not list: a resource read by a URI a template gave, a template
// named by a completion. The whole catalog admits everything.
func (c *Catalog) Admits(kind, server, raw, exported string) bool {
	return c.keep == nil || c.keep(policy.Item{Server: server, Kind: kind, Name: raw, Exported: exported})
}

// Hidden is the one answer a view gives for what it does not show, the
// same for a forbidden item, a filtered one and one that does not exist;
// the suggestion comes from what the caller can see.
func (c *Catalog) Hidden(kind, name string) error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown %s %q%s", kind, name, c.DidYouMean(kind, name))
}
