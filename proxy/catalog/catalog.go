package catalog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// list identifies one of the four lists the trunk exports.
type List int

const (
	ListTools List = iota
	ListPrompts
	ListResources
	ListTemplates
	ListCount
)

// listSpec names a list's method, result field, identifying item field
// and the notification that it changed.
type ListSpec struct {
	Method, Field, Key, Changed string
}

// Specs are the four lists' names.
var Specs = [ListCount]ListSpec{
	ListTools:     {"tools/list", "tools", "name", "notifications/tools/list_changed"},
	ListPrompts:   {"prompts/list", "prompts", "name", "notifications/prompts/list_changed"},
	ListResources: {"resources/list", "resources", "uri", "notifications/resources/list_changed"},
	ListTemplates: {"resources/templates/list", "resourceTemplates", "uriTemplate", "notifications/resources/list_changed"},
}

// entry is one exported item: its name (or URI) as the host sees it, its
// owner, its name (or URI) upstream, and the item as the host receives it.
type Entry struct {
	Exported string
	Server   string
	Raw      string
	Item     json.RawMessage
}

// Catalog is an immutable snapshot of everything the trunk exports, each
// list sorted by exported name so the host sees the same order on every
// start. A new one replaces the old whenever a server changes.
type Catalog struct {
	Scheme naming.Scheme
	Lists  [ListCount][]Entry
	// searchable holds every upstream tool, listed or not: what tool search
	// looks through when the tools list carries only the search tools.
	Searchable []Entry
	// tools and prompts map server -> exported name -> upstream name: the
	// second half of routing after the scheme's Split. Only exported items
	// are here, so a filtered tool cannot be called.
	Tools   map[string]map[string]string
	Prompts map[string]map[string]string
	// unmatched are what the trunk logs once each as a warning: filter
	// patterns that matched nothing ("server: field pattern"), and the
	// conflicts below.
	Unmatched []string

	// unprefixedIndex routes the names and URIs of unprefixed servers; nil when
	// every server is namespaced (see unprefixed.go). conflicts are the
	// items withheld because another server exports the same name.
	unprefixedIndex *unprefixedIndex
	Conflicts       []Conflict

	// bare maps the upstream name of each namespaced server's exported
	// tool to its entries, for the bare-name calls of MCP Apps (appcalls.go).
	bare map[string][]Entry

	// withheld is what pinning keeps from the host, per server: a request
	// for it is refused with the reason (see pinning.go).
	Withheld map[string]withheldItems

	// keep is what a view admits (view.go); nil in the whole catalog.
	// shown are the servers a view holds an item of (Shows).
	keep  func(policy.Item) bool
	shown map[string]bool

	// relisted is upstream.Catalog.Relisted of each server the catalog
	// shows anything of: a count that moved is a list_changed the server
	// sent, owed to hosts even when its list reads the same.
	relisted map[string][ListCount]uint64

	// maxPage bounds the bytes of a page's items (0: no bound), so that no
	// page is a message the host cannot read.
	maxPage int

	// input is what the catalog was built from, pinning already applied,
	// for Fitted and Profiled; fitted holds the catalogs Fitted built, by
	// budget, and profiled those Profiled built, by key.
	input    Input
	fittedMu sync.Mutex
	fitted   map[int]*Catalog
	profiled map[string]*Catalog

	// first caches each list's first page: the catalog never changes, and
	// most hosts only ever ask for the first page (the only one, usually).
	first [ListCount]struct {
		once sync.Once
		page json.RawMessage
		err  error
	}
}

// FirstPage is page(l, "", size), built once per catalog. A catalog is
// served with one page size (the trunk's), so size is not part of the key.
func (c *Catalog) FirstPage(l List, size int) (json.RawMessage, error) {
	f := &c.first[l]
	f.once.Do(func() { f.page, f.err = c.Page(l, "", size) })
	return f.page, f.err
}

// Server is one configured server as a catalog is built from it: what its
// upstream.Client says at the moment of the build, as values, so that a
// catalog can be built (and tested) without a running server.
type Server struct {
	Name  string
	Spec  config.Spec
	Items upstream.Catalog
	// Listed is true for a server whose items are exported: ready, or
	// sleeping with its cached catalog.
	Listed bool
	// Settled is true once its first discovery ended: only then are its
	// filter patterns that match nothing reported.
	Settled bool
}

// Input is what a catalog is built from.
type Input struct {
	// Servers are every configured server, in name order: the first to
	// claim a name keeps it.
	Servers []Server
	Policy  Policy
	// Pins holds the servers' items against the lockfile; nil checks
	// nothing.
	Pins *Pinner
	// OwnTools and OwnResources are the trunk's own items, which claim
	// their names before any server.
	OwnTools, OwnResources []Entry
	Logger                 *slog.Logger
}

// Build namespaces every listed (ready or sleeping) server's lists under the policy,
// after pinning has held them against the lockfile. A
// server whose names cannot be assigned (its name leaves no room under the
// budget) is left out and logged: the others still export.
func Build(in Input) *Catalog {
	var others map[string][]string
	if !in.Pins.Off() {
		others = otherTools(in.Servers, in.Policy.Scheme)
	}
	admitted := make([]Server, len(in.Servers))
	withheld := map[string]withheldItems{}
	for i, s := range in.Servers {
		admitted[i] = s
		if !s.Listed {
			continue
		}
		items, held := in.Pins.admit(s.Name, s.Items, others[s.Name], s.Settled)
		if held != nil {
			held.renamed(s.Spec.Overrides)
			withheld[s.Name] = held
		}
		items.Relisted = s.Items.Relisted
		admitted[i].Items = items
	}
	in.Servers, in.Pins = admitted, nil
	return build(in, withheld)
}

// build is Build of servers whose items pinning has admitted already
// (withheld: what it kept back, per server).
func build(in Input, withheld map[string]withheldItems) *Catalog {
	pol, logger := in.Policy, in.Logger
	cat := &Catalog{
		Scheme:   pol.Scheme,
		Tools:    map[string]map[string]string{},
		Prompts:  map[string]map[string]string{},
		Withheld: withheld,
		relisted: map[string][ListCount]uint64{},
		input:    in,
	}
	cat.unprefixedIndex = newUnprefixedIndex(in.Servers)
	claimed := newClaims(cat.unprefixedIndex)
	ownTools, ownResources := in.OwnTools, in.OwnResources
	claimed.admit(ListTools, ownTools)
	claimed.admit(ListResources, ownResources)
	cat.Lists[ListTools] = append(cat.Lists[ListTools], ownTools...)
	cat.Lists[ListResources] = append(cat.Lists[ListResources], ownResources...)
	cat.Tools[naming.TrunkServer] = routes(ownTools)
	for _, s := range in.Servers { // in name order: the first server to claim a name keeps it
		if !s.Listed {
			continue
		}
		server, spec, items := s.Name, s.Spec, s.Items
		cat.relisted[server] = items.Relisted
		exp, warn, err := exportServer(pol, server, spec, items, logger)
		cat.Unmatched = append(cat.Unmatched, warn...)
		if err != nil {
			logger.Error("cannot export the server's "+err.list, "server", server, "error", err.err)
			continue
		}
		for l := range exp {
			exp[l] = claimed.admit(List(l), exp[l])
			if spec.Unprefixed() {
				cat.unprefixedIndex.add(List(l), exp[l])
			}
		}
		tools := exp[ListTools]
		cat.Searchable = append(cat.Searchable, tools...)
		if !pol.ToolSearch {
			cat.Lists[ListTools] = append(cat.Lists[ListTools], tools...)
		}
		cat.Lists[ListPrompts] = append(cat.Lists[ListPrompts], exp[ListPrompts]...)
		cat.Tools[server] = routes(tools)
		if !spec.Unprefixed() {
			cat.addBare(tools)
		}
		cat.Prompts[server] = routes(exp[ListPrompts])
		cat.Lists[ListResources] = append(cat.Lists[ListResources], exp[ListResources]...)
		cat.Lists[ListTemplates] = append(cat.Lists[ListTemplates], exp[ListTemplates]...)
		if s.Settled {
			cat.Unmatched = append(cat.Unmatched, unmatchedPatterns(server, spec, items)...)
			cat.Unmatched = append(cat.Unmatched, unmatchedOverrides(server, spec.Overrides, items)...)
		}
	}
	if claimed != nil {
		cat.Conflicts = claimed.conflicts
		for _, c := range cat.Conflicts {
			cat.Unmatched = append(cat.Unmatched, c.String())
		}
	}
	for l := range cat.Lists {
		sortEntries(cat.Lists[l])
	}
	if pol.MaxMessage > 0 {
		cat.maxPage = pol.MaxMessage - pageOverhead
		for l := range cat.Lists {
			cat.Lists[l] = dropOversized(cat.Lists[l], Specs[l].Field, cat.maxPage, logger)
		}
	}
	sortEntries(cat.Searchable)
	return cat
}

// Fitted is the catalog as it is under a name budget of maxLen characters
// when that is below the budget it was built under (else c itself): the
// same items, from the same moment of the servers and the same pinning
// decisions, named to fit a host that puts a prefix of its own before
// them (naming.HostBudget). Built once per catalog and budget, so a host's
// names are the same on every request until a server changes.
func (c *Catalog) Fitted(maxLen int) *Catalog {
	if maxLen <= 0 || c.input.Servers == nil && c.input.OwnTools == nil {
		return c
	}
	if built := cmp.Or(c.input.Policy.MaxLen, naming.DefaultMaxLength); maxLen >= built {
		return c
	}
	c.fittedMu.Lock()
	defer c.fittedMu.Unlock()
	if f, ok := c.fitted[maxLen]; ok {
		return f
	}
	in := c.input
	in.Policy.MaxLen = maxLen
	f := build(in, c.Withheld)
	if c.fitted == nil {
		c.fitted = map[int]*Catalog{}
	}
	c.fitted[maxLen] = f
	return f
}

// Profiled is the catalog as a profile's callers see it when the profile
// carries overrides of its own (by server identifier, set over each
// server's own with config.Overrides.Over): the same items, from the same
// moment of the servers and the same pinning decisions, exported in the
// profile's shape. Built once per catalog and key, which must tell apart
// every set of overrides given on the same catalog (the rules before and
// after a reload share it); c itself when the profile overrides nothing.
func (c *Catalog) Profiled(key string, overrides map[string]config.Overrides) *Catalog {
	if len(overrides) == 0 || c.input.Servers == nil {
		return c
	}
	c.fittedMu.Lock()
	defer c.fittedMu.Unlock()
	if p, ok := c.profiled[key]; ok {
		return p
	}
	in := c.input
	in.Servers = slices.Clone(in.Servers)
	withheld, cloned := c.Withheld, false
	for i, s := range in.Servers {
		o, ok := overrides[s.Name]
		if !ok {
			continue
		}
		in.Servers[i].Spec.Overrides = s.Spec.Overrides.Over(o)
		if held := c.Withheld[s.Name]; held != nil {
			// A withheld item is refused by the profile's name for it too.
			if !cloned {
				withheld, cloned = maps.Clone(c.Withheld), true
			}
			shaped := withheldItems{}
			for kind, why := range held {
				shaped[kind] = maps.Clone(why)
			}
			shaped.renamed(in.Servers[i].Spec.Overrides)
			withheld[s.Name] = shaped
		}
	}
	p := build(in, withheld)
	if c.profiled == nil {
		c.profiled = map[string]*Catalog{}
	}
	c.profiled[key] = p
	return p
}

func sortEntries(e []Entry) {
	sort.Slice(e, func(i, j int) bool { return e[i].Exported < e[j].Exported })
}

// exportError says which list of a server could not be exported.
type exportError struct {
	list string
	err  error
}

// exportServer is one server's four lists in catalog form, under the
// policy and the server's overrides: namespaced, or as they are for an
// unprefixed server. warn are the overrides that could not be applied.
func exportServer(pol Policy, server string, spec config.Spec, items upstream.Catalog, logger *slog.Logger) (_ [ListCount][]Entry, warn []string, _ *exportError) {
	var exp [ListCount][]Entry
	tools, renamed, warn := pol.tools(spec, items.Tools)
	prompts, renamedPrompts, pwarn := overridePrompts(server, spec.Overrides, filterItems(spec.Prompts, items.Prompts))
	warn = append(warn, pwarn...)
	resources := filterItems(spec.Resources, items.Resources)
	templates := filterItems(spec.Resources, items.Templates)
	if spec.Unprefixed() {
		exp[ListTools], exp[ListPrompts] = exportUnprefixed(server, tools, renamed), exportUnprefixed(server, prompts, renamedPrompts)
		exp[ListResources], exp[ListTemplates] = exportUnprefixed(server, resources, nil), exportUnprefixed(server, templates, nil)
		return exp, warn, nil
	}
	var err error
	if exp[ListTools], err = exportNamed(pol.Scheme, server, tools, renamed, pol.MaxLen); err != nil {
		return exp, warn, &exportError{"tools", err}
	}
	namespaceAppMetas(server, exp[ListTools])
	if exp[ListPrompts], err = exportNamed(pol.Scheme, server, prompts, renamedPrompts, pol.MaxLen); err != nil {
		return exp, warn, &exportError{"prompts", err}
	}
	exp[ListResources] = exportURIs(server, resources, "uri", logger)
	exp[ListTemplates] = exportURIs(server, templates, "uriTemplate", logger)
	return exp, warn, nil
}

// shownName is the name an item is exported under, before the namespace:
// its new name when an override renames it, else its own.
func shownName(it upstream.Item, renamed map[string]string) string {
	if n, ok := renamed[it.Key]; ok {
		return n
	}
	return it.Key
}

// exportNamed gives tools or prompts their namespaced names: of their own
// or, for those renamed, of the new name (which routes back to the
// upstream name, Entry.Raw).
func exportNamed(scheme naming.Scheme, server string, items []upstream.Item, renamed map[string]string, maxLen int) ([]Entry, error) {
	raws := make([]string, len(items))
	for i, it := range items {
		raws[i] = shownName(it, renamed)
	}
	names, err := scheme.Assign(server, raws, maxLen)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Key] {
			continue // a server listing one name twice: the first wins
		}
		seen[it.Key] = true
		name := names[shownName(it, renamed)]
		item, err := rawjson.ReplaceString(it.Raw, "name", name)
		if err != nil {
			continue // itemKey already parsed it upstream; cannot happen
		}
		out = append(out, Entry{Exported: name, Server: server, Raw: it.Key, Item: item})
	}
	return out, nil
}

// exportURIs rewrites resources' or templates' URIs into the namespaced form.
func exportURIs(server string, items []upstream.Item, field string, logger *slog.Logger) []Entry {
	out := make([]Entry, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Key] {
			continue // listed twice: the first wins, as for tools
		}
		seen[it.Key] = true
		uri := naming.ResourceURI(server, it.Key)
		item, err := rawjson.ReplaceString(it.Raw, field, uri)
		if err != nil {
			logger.Warn("skipping a resource", "server", server, "uri", logkey.Clip(it.Key), "error", err)
			continue
		}
		out = append(out, Entry{Exported: uri, Server: server, Raw: it.Key, Item: item})
	}
	return out
}

func routes(entries []Entry) map[string]string {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[e.Exported] = e.Raw
	}
	return m
}

// page returns one page of a list as a result object: at most size items
// after the cursor (size <= 0: all of them), and a nextCursor when more
// remain. Cursors name the last item sent rather than a position, so they
// stay valid while servers come and go.
func (c *Catalog) Page(l List, cursor string, size int) (json.RawMessage, error) {
	entries := c.Lists[l]
	from := 0
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, err
		}
		from = sort.Search(len(entries), func(i int) bool { return entries[i].Exported > after })
	}
	to := len(entries)
	if size > 0 && from+size < to {
		to = from + size
	}
	if c.maxPage > 0 {
		to = from + fitting(entries[from:to], c.maxPage)
	}
	var cursorJSON []byte
	if to < len(entries) {
		cursorJSON, _ = json.Marshal(encodeCursor(entries[to-1].Exported))
	}
	// The page is sized before it is written: the first page is kept with
	// the catalog (FirstPage), and a buffer grown by doubling would keep up
	// to twice its length.
	n := len(`{"":[]}`) + len(Specs[l].Field) + len(`,"nextCursor":`) + len(cursorJSON)
	for _, e := range entries[from:to] {
		n += len(e.Item) + 1
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	b.WriteString(`{"`)
	b.WriteString(Specs[l].Field)
	b.WriteString(`":[`)
	for i, e := range entries[from:to] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.Item)
	}
	b.WriteByte(']')
	if cursorJSON != nil {
		b.WriteString(`,"nextCursor":`)
		b.Write(cursorJSON)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// EqualList reports whether list l has the same items in both catalogs,
// and no server they show announced a change of it in between.
func EqualList(a, b *Catalog, l List) bool {
	x, y := a.Lists[l], b.Lists[l]
	if len(x) != len(y) {
		return false
	}
	for _, c := range [2]struct{ p, q *Catalog }{{a, b}, {b, a}} {
		for server, n := range c.p.relisted {
			if c.q.relisted[server][l] != n[l] { // a server absent counts 0
				return false
			}
		}
	}
	for i := range x {
		if x[i].Exported != y[i].Exported || !bytes.Equal(x[i].Item, y[i].Item) {
			return false
		}
	}
	return true
}

// fitting is how many of entries, from the first, fit in a page of budget
// bytes (at least one: dropOversized left out any that fit in no page).
func fitting(entries []Entry, budget int) int {
	used := 0
	for i, e := range entries {
		used += len(e.Item) + 1 // and its comma
		if used > budget && i > 0 {
			return i
		}
	}
	return len(entries)
}

// dropOversized leaves out of a list the items that are larger than a page
// may be: no page could carry them to the host. Each is logged by name.
func dropOversized(entries []Entry, list string, budget int, logger *slog.Logger) []Entry {
	if !slices.ContainsFunc(entries, func(e Entry) bool { return len(e.Item) > budget }) {
		return entries
	}
	out := make([]Entry, 0, len(entries)-1)
	for _, e := range entries {
		if len(e.Item) <= budget {
			out = append(out, e)
			continue
		}
		logger.Warn("leaving an item out of the host's list: its definition is larger than one message to the host may be",
			"server", e.Server, "list", list, "item", e.Exported, "bytes", len(e.Item), "limit", LimitSetting)
	}
	return out
}
