package proxy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// list identifies one of the four lists the trunk exports.
type list int

const (
	listTools list = iota
	listPrompts
	listResources
	listTemplates
	listCount
)

// listSpec names a list's method, result field and identifying item field.
var listSpecs = [listCount]struct {
	method, field, key, changed string
}{
	listTools:     {"tools/list", "tools", "name", "notifications/tools/list_changed"},
	listPrompts:   {"prompts/list", "prompts", "name", "notifications/prompts/list_changed"},
	listResources: {"resources/list", "resources", "uri", "notifications/resources/list_changed"},
	listTemplates: {"resources/templates/list", "resourceTemplates", "uriTemplate", "notifications/resources/list_changed"},
}

// entry is one exported item: its name (or URI) as the host sees it, its
// owner, its name (or URI) upstream, and the item as the host receives it.
type entry struct {
	exported string
	server   string
	raw      string
	item     json.RawMessage
}

// catalog is an immutable snapshot of everything the trunk exports, each
// list sorted by exported name so the host sees the same order on every
// start. A new one replaces the old whenever a server changes.
type catalog struct {
	scheme naming.Scheme
	lists  [listCount][]entry
	// searchable holds every upstream tool, listed or not: what tool search
	// looks through when the tools list carries only the search tools.
	searchable []entry
	// tools and prompts map server -> exported name -> upstream name: the
	// second half of routing after the scheme's Split. Only exported items
	// are here, so a filtered tool cannot be called.
	tools   map[string]map[string]string
	prompts map[string]map[string]string
	// unmatched are what the trunk logs once each as a warning: filter
	// patterns that matched nothing ("server: field pattern"), and the
	// conflicts below.
	unmatched []string

	// plain routes the names and URIs of unprefixed servers; nil when
	// every server is namespaced (see unprefixed.go). conflicts are the
	// items withheld because another server exports the same name.
	plain     *plainIndex
	conflicts []conflict

	// withheld is what pinning keeps from the host, per server: a request
	// for it is refused with the reason (see pinning.go).
	withheld map[string]withheldItems

	// maxPage bounds the bytes of a page's items (0: no bound), so that no
	// page is a message the host cannot read.
	maxPage int

	// first caches each list's first page: the catalog never changes, and
	// most hosts only ever ask for the first page (the only one, usually).
	first [listCount]struct {
		once sync.Once
		page json.RawMessage
		err  error
	}
}

// firstPage is page(l, "", size), built once per catalog. A catalog is
// served with one page size (the trunk's), so size is not part of the key.
func (c *catalog) firstPage(l list, size int) (json.RawMessage, error) {
	f := &c.first[l]
	f.once.Do(func() { f.page, f.err = c.page(l, "", size) })
	return f.page, f.err
}

// buildCatalog namespaces every listed (ready or sleeping) server's lists under the policy,
// after pinning has held them against the lockfile. A
// server whose names cannot be assigned (its name leaves no room under the
// budget) is left out and logged: the others still export.
func buildCatalog(clients []*upstream.Client, pol policy, pins *pinner, logger *slog.Logger) *catalog {
	cat := &catalog{
		scheme:   pol.scheme,
		tools:    map[string]map[string]string{},
		prompts:  map[string]map[string]string{},
		withheld: map[string]withheldItems{},
	}
	var others map[string][]string
	if !pins.off() {
		others = otherTools(clients, pol.scheme)
	}
	cat.plain = newPlainIndex(clients)
	claimed := newClaims(cat.plain)
	ownTools, ownResources := ownEntries(pol)
	claimed.admit(listTools, ownTools)
	claimed.admit(listResources, ownResources)
	cat.lists[listTools] = append(cat.lists[listTools], ownTools...)
	cat.lists[listResources] = append(cat.lists[listResources], ownResources...)
	cat.tools[naming.TrunkServer] = routes(ownTools)
	for _, c := range clients { // in name order: the first server to claim a name keeps it
		if !c.Listed() { // ready, or sleeping with its cached catalog
			continue
		}
		server, spec, items := c.Name(), c.Spec(), c.Catalog()
		settled := isClosed(c.Settled())
		items, withheld := pins.admit(server, items, others[server], settled)
		if withheld != nil {
			cat.withheld[server] = withheld
		}
		exp, err := exportServer(pol, server, spec, items, logger)
		if err != nil {
			logger.Error("cannot export the server's "+err.list, "server", server, "error", err.err)
			continue
		}
		for l := range exp {
			exp[l] = claimed.admit(list(l), exp[l])
			if spec.Unprefixed() {
				cat.plain.add(list(l), exp[l])
			}
		}
		tools := exp[listTools]
		cat.searchable = append(cat.searchable, tools...)
		if !pol.toolSearch {
			cat.lists[listTools] = append(cat.lists[listTools], tools...)
		}
		cat.lists[listPrompts] = append(cat.lists[listPrompts], exp[listPrompts]...)
		cat.tools[server] = routes(tools)
		cat.prompts[server] = routes(exp[listPrompts])
		cat.lists[listResources] = append(cat.lists[listResources], exp[listResources]...)
		cat.lists[listTemplates] = append(cat.lists[listTemplates], exp[listTemplates]...)
		if settled {
			cat.unmatched = append(cat.unmatched, unmatchedPatterns(server, spec, items)...)
		}
	}
	if claimed != nil {
		cat.conflicts = claimed.conflicts
		for _, c := range cat.conflicts {
			cat.unmatched = append(cat.unmatched, c.String())
		}
	}
	for l := range cat.lists {
		sortEntries(cat.lists[l])
	}
	if pol.maxMessage > 0 {
		cat.maxPage = pol.maxMessage - pageOverhead
		for l := range cat.lists {
			cat.lists[l] = dropOversized(cat.lists[l], listSpecs[l].field, cat.maxPage, logger)
		}
	}
	sortEntries(cat.searchable)
	return cat
}

func sortEntries(e []entry) {
	sort.Slice(e, func(i, j int) bool { return e[i].exported < e[j].exported })
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// exportError says which list of a server could not be exported.
type exportError struct {
	list string
	err  error
}

// exportServer is one server's four lists in catalog form, under the
// policy: namespaced, or as they are for an unprefixed server.
func exportServer(pol policy, server string, spec config.Spec, items upstream.Catalog, logger *slog.Logger) ([listCount][]entry, *exportError) {
	var exp [listCount][]entry
	tools := pol.tools(spec, items.Tools)
	prompts := filterItems(spec.Prompts, items.Prompts)
	resources := filterItems(spec.Resources, items.Resources)
	templates := filterItems(spec.Resources, items.Templates)
	if spec.Unprefixed() {
		exp[listTools], exp[listPrompts] = exportAsIs(server, tools), exportAsIs(server, prompts)
		exp[listResources], exp[listTemplates] = exportAsIs(server, resources), exportAsIs(server, templates)
		return exp, nil
	}
	var err error
	if exp[listTools], err = exportNamed(pol.scheme, server, tools, pol.maxLen); err != nil {
		return exp, &exportError{"tools", err}
	}
	if exp[listPrompts], err = exportNamed(pol.scheme, server, prompts, pol.maxLen); err != nil {
		return exp, &exportError{"prompts", err}
	}
	exp[listResources] = exportURIs(server, resources, "uri", logger)
	exp[listTemplates] = exportURIs(server, templates, "uriTemplate", logger)
	return exp, nil
}

// exportNamed gives tools or prompts their namespaced names.
func exportNamed(scheme naming.Scheme, server string, items []upstream.Item, maxLen int) ([]entry, error) {
	raws := make([]string, len(items))
	for i, it := range items {
		raws[i] = it.Key
	}
	names, err := scheme.Assign(server, raws, maxLen)
	if err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Key] {
			continue // a server listing one name twice: the first wins
		}
		seen[it.Key] = true
		name := names[it.Key]
		item, err := rawjson.ReplaceString(it.Raw, "name", name)
		if err != nil {
			continue // itemKey already parsed it upstream; cannot happen
		}
		out = append(out, entry{exported: name, server: server, raw: it.Key, item: item})
	}
	return out, nil
}

// exportURIs rewrites resources' or templates' URIs into the namespaced form.
func exportURIs(server string, items []upstream.Item, field string, logger *slog.Logger) []entry {
	out := make([]entry, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Key] {
			continue // listed twice: the first wins, as for tools
		}
		seen[it.Key] = true
		uri := naming.ResourceURI(server, it.Key)
		item, err := rawjson.ReplaceString(it.Raw, field, uri)
		if err != nil {
			logger.Warn("skipping a resource", "server", server, "uri", it.Key, "error", err)
			continue
		}
		out = append(out, entry{exported: uri, server: server, raw: it.Key, item: item})
	}
	return out
}

func routes(entries []entry) map[string]string {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[e.exported] = e.raw
	}
	return m
}

// page returns one page of a list as a result object: at most size items
// after the cursor (size <= 0: all of them), and a nextCursor when more
// remain. Cursors name the last item sent rather than a position, so they
// stay valid while servers come and go.
func (c *catalog) page(l list, cursor string, size int) (json.RawMessage, error) {
	entries := c.lists[l]
	from := 0
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, err
		}
		from = sort.Search(len(entries), func(i int) bool { return entries[i].exported > after })
	}
	to := len(entries)
	if size > 0 && from+size < to {
		to = from + size
	}
	if c.maxPage > 0 {
		to = from + fitting(entries[from:to], c.maxPage)
	}
	var b bytes.Buffer
	b.WriteString(`{"`)
	b.WriteString(listSpecs[l].field)
	b.WriteString(`":[`)
	for i, e := range entries[from:to] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.item)
	}
	b.WriteByte(']')
	if to < len(entries) {
		b.WriteString(`,"nextCursor":`)
		enc, _ := json.Marshal(encodeCursor(entries[to-1].exported))
		b.Write(enc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// equalList reports whether list l has the same items in both catalogs.
func equalList(a, b *catalog, l list) bool {
	x, y := a.lists[l], b.lists[l]
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].exported != y[i].exported || !bytes.Equal(x[i].item, y[i].item) {
			return false
		}
	}
	return true
}

// fitting is how many of entries, from the first, fit in a page of budget
// bytes (at least one: dropOversized left out any that fit in no page).
func fitting(entries []entry, budget int) int {
	used := 0
	for i, e := range entries {
		used += len(e.item) + 1 // and its comma
		if used > budget && i > 0 {
			return i
		}
	}
	return len(entries)
}

// dropOversized leaves out of a list the items that are larger than a page
// may be: no page could carry them to the host. Each is logged by name.
func dropOversized(entries []entry, list string, budget int, logger *slog.Logger) []entry {
	if !slices.ContainsFunc(entries, func(e entry) bool { return len(e.item) > budget }) {
		return entries
	}
	out := make([]entry, 0, len(entries)-1)
	for _, e := range entries {
		if len(e.item) <= budget {
			out = append(out, e)
			continue
		}
		logger.Warn("leaving an item out of the host's list: its definition is larger than one message to the host may be",
			"server", e.server, "list", list, "item", e.exported, "bytes", len(e.item), "limit", limitSetting)
	}
	return out
}
