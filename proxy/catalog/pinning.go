package catalog

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Pinning (trunk.pin, internal/pin): every catalog build holds each server's
// definitions against the lockfile before anything is exported.
//
//   - off: nothing is checked.
//   - warn (the default): a server never seen is recorded as it is, by the
//     trunk that serves a host (trust on first use); later changes are
//     drift, exported but logged once and shown in check and status.
//   - enforce: only what the lockfile has, as it has it, reaches the host:
//     a new or changed item is withheld (not listed, not callable, with an
//     error naming "mcptrunk pin SERVER"), and so is an item with invisible
//     characters unless pinned as it is. A lockfile that cannot be read
//     withholds everything (fail closed).
//
// Builds happen on every discovery (start, restart, list_changed, reload),
// and when the lockfile changes (watchLock), so drift is seen whenever it
// happens and a "mcptrunk pin" run takes effect without a restart.

// pinner holds the pinning state of one trunk.
type Pinner struct {
	mode   string
	path   string
	record bool // record servers seen for the first time (warn mode, serve)
	logger *slog.Logger

	mu       sync.Mutex
	lock     *pin.Lock
	lockErr  error
	stamp    fileStamp
	loaded   bool
	reported map[string]bool     // messages logged once
	servers  map[string]pinState // the last evaluation of each server
}

// pinState is what pinning found of one server, for status and check.
type pinState struct {
	Drift    []pinItem `json:"drift,omitempty"`
	Withheld []pinItem `json:"withheld,omitempty"`
	Findings []pinItem `json:"findings,omitempty"`
}

// pinItem is one item pinning has something to say about.
type pinItem struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	What string `json:"what"`
}

// PinReport is pinning in mcp__trunk__status.
type PinReport struct {
	Mode     string              `json:"mode"`
	LockFile string              `json:"lockFile,omitempty"`
	Error    string              `json:"error,omitempty"`
	Servers  map[string]pinState `json:"servers,omitempty"`
}

func NewPinner(o config.TrunkOptions, record bool, logger *slog.Logger) *Pinner {
	mode := o.Pin
	if o.LockFile == "" {
		mode = config.PinOff // a config not read from a file has no lockfile
	}
	return &Pinner{mode: mode, path: o.LockFile, record: record, logger: logger,
		reported: map[string]bool{}, servers: map[string]pinState{}}
}

func (p *Pinner) Off() bool { return p == nil || p.mode == config.PinOff || p.mode == "" }

// fileStamp says whether a file changed: its size and modification time.
type fileStamp struct {
	size int64
	mod  time.Time
	ok   bool
}

func stampOf(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: st.Size(), mod: st.ModTime(), ok: true}
}

// current returns the lockfile's content, reading it again when it changed.
func (p *Pinner) current() (*pin.Lock, error) {
	st := stampOf(p.path)
	if !p.loaded || st != p.stamp {
		p.lock, p.lockErr = pin.Read(p.path)
		p.stamp, p.loaded = st, true
		if p.lockErr == nil {
			dropListDefinitions(p.lock)
		}
		if p.lockErr != nil {
			p.once("lockfile:"+p.lockErr.Error(), func() {
				p.logger.Error("pinning: the lockfile cannot be used", "error", p.lockErr, "mode", p.mode)
			})
		}
	}
	return p.lock, p.lockErr
}

// dropListDefinitions forgets the definitions pinned of the lists (tools,
// prompts, resources, templates) and keeps their hashes, which are all the
// trunk compares (judge): the lockfile holds every definition again, about
// 0.6 MB kept for as long as the trunk runs with 1,000 tools. A skill's
// definition is kept: its files' digests are read from it
// (pinnedFileDigest).
func dropListDefinitions(l *pin.Lock) {
	for _, s := range l.Servers {
		for _, kind := range pin.Kinds {
			for key, e := range s[kind] {
				e.Definition = nil
				s[kind][key] = e
			}
		}
	}
}

// LockChanged reports whether the lockfile changed since it was last read.
func (p *Pinner) LockChanged() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loaded && stampOf(p.path) != p.stamp
}

func (p *Pinner) once(key string, f func()) {
	if !p.reported[key] {
		p.reported[key] = true
		f()
	}
}

// withheldItems are the items of one server the host does not get, by kind
// and key, with the reason a call is refused.
type withheldItems map[pin.Kind]map[string]string

func (w withheldItems) add(kind pin.Kind, key, why string) {
	if w[kind] == nil {
		w[kind] = map[string]string{}
	}
	w[kind][key] = why
}

// admit holds one server's catalog against the lockfile and returns what
// may be exported, and what is withheld and why. others are the names of
// other servers' tools, for the shadowing finding. complete says the
// server has listed everything it offers: only then is a server seen for
// the first time recorded (a server is ready once it has listed its tools,
// before its prompts and resources).
func (p *Pinner) admit(server string, cat upstream.Catalog, others []string, complete bool) (upstream.Catalog, withheldItems) {
	if p.Off() {
		return cat, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now, err := pin.Snapshot(PinDefs(cat))
	if err != nil {
		p.logger.Warn("pinning: a definition cannot be read", "server", server, "error", err)
		now = pin.Server{}
	}
	withheld := withheldItems{}
	var st pinState
	pinned := p.judge(server, now, withheld, &st, complete)
	p.inspect(server, now, pinned, others, withheld, &st)
	for kind, m := range withheld {
		for key, why := range m {
			st.Withheld = append(st.Withheld, pinItem{string(kind), key, why})
		}
	}
	sortPinItems(st.Drift)
	sortPinItems(st.Withheld)
	sortPinItems(st.Findings)
	p.servers[server] = st
	if len(withheld) == 0 {
		return cat, nil
	}
	return upstream.Catalog{
		Tools:     keep(cat.Tools, withheld[pin.Tools]),
		Prompts:   keep(cat.Prompts, withheld[pin.Prompts]),
		Resources: keep(cat.Resources, withheld[pin.Resources]),
		Templates: keep(cat.Templates, withheld[pin.Templates]),
	}, withheld
}

// judge compares what a server exports now with the lockfile: drift goes in
// st, what enforce mode keeps from the host in withheld. It returns what is
// pinned of the server (nil when nothing, or when the lockfile is unusable).
func (p *Pinner) judge(server string, now pin.Server, withheld withheldItems, st *pinState, complete bool) pin.Server {
	enforce := p.mode == config.PinEnforce
	lock, err := p.current()
	switch {
	case err != nil && enforce:
		for kind, m := range now {
			for key := range m {
				withheld.add(kind, key, unusableLock(err, server))
			}
		}
		return nil
	case err != nil:
		return nil // warn: exported; current logged the error once
	}
	pinned, known := lock.Servers[server]
	if (!known || readsOnly(pinned)) && !enforce {
		if p.record && complete && len(now) > 0 {
			p.recordFirstSight(server, now)
		}
		return nil
	}
	for _, c := range pin.Compare(server, pinned, now) {
		what := driftWords[c.Status]
		if !known {
			what = "not pinned yet (the lockfile has nothing of its server)"
		}
		st.Drift = append(st.Drift, pinItem{string(c.Kind), c.Key, what})
		switch {
		case c.Status == pin.Removed:
		case enforce:
			withheld.add(c.Kind, c.Key, fmt.Sprintf("%s %q of server %q is %s and pinning is enforced: run \"mcptrunk pin %s\" to review and trust it", c.Kind.Singular(), c.Key, server, what, server))
		default:
			p.once(fmt.Sprintf("drift:%s:%s:%s:%s", server, c.Kind, c.Key, now[c.Kind][c.Key].SHA256), func() {
				p.logger.Warn(`pinning: a definition is not the one pinned; run "mcptrunk pin `+server+`" to review it`,
					"server", server, "kind", c.Kind.Singular(), "name", c.Key, "status", string(c.Status))
			})
		}
	}
	return pinned
}

var driftWords = map[pin.Status]string{
	pin.New:     "new since it was pinned",
	pin.Changed: "changed since it was pinned",
	pin.Removed: "removed since it was pinned",
}

// inspect adds the findings of every definition to st and logs each once;
// in enforce mode an item with invisible characters is withheld unless it
// is pinned as it is.
func (p *Pinner) inspect(server string, now, pinned pin.Server, others []string, withheld withheldItems, st *pinState) {
	for _, kind := range pin.Kinds {
		for key, e := range now[kind] {
			for _, f := range pin.Inspect(kind, key, e.Definition, others) {
				st.Findings = append(st.Findings, pinItem{string(kind), key, f.Problem})
				if p.mode == config.PinEnforce && f.Invisible() && !pinned.Matches(kind, key, e.SHA256) {
					withheld.add(kind, key, fmt.Sprintf("%s %q of server %q has %s and pinning is enforced: run \"mcptrunk pin %s\" to review and trust it", kind.Singular(), key, server, f.Problem, server))
				}
				p.once(fmt.Sprintf("finding:%s:%s:%s:%s", server, kind, key, f.Problem), func() {
					p.logger.Warn("pinning: a definition needs a look", "server", server, "kind", kind.Singular(), "name", logkey.Clip(key), "finding", f.Problem)
				})
			}
		}
	}
}

// recordFirstSight pins a server seen for the first time (warn mode).
func (p *Pinner) recordFirstSight(server string, now pin.Server) {
	err := pin.Update(p.path, func(l *pin.Lock) error {
		if s, ok := l.Servers[server]; !ok {
			l.Servers[server] = now
		} else if readsOnly(s) {
			for kind, m := range now {
				s[kind] = m
			}
		}
		return nil
	})
	if err != nil {
		p.once("record:"+server+err.Error(), func() {
			p.logger.Warn("pinning: recording a new server failed", "server", server, "error", err)
		})
		return
	}
	p.logger.Info("pinning: recorded a server seen for the first time", "server", server, "lockFile", p.path)
	p.loaded = false // read back what was written
}

// readsOnly reports whether all that is pinned of a server is what serve
// recorded as it was read (its apps, its skills): a skill listed before
// the server's catalog was complete must not make the catalog's first
// sight look like drift.
func readsOnly(s pin.Server) bool {
	if len(s[pin.Apps])+len(s[pin.Skills]) == 0 {
		return false
	}
	for _, kind := range pin.Kinds {
		if len(s[kind]) > 0 {
			return false
		}
	}
	return true
}

func keep(items []upstream.Item, drop map[string]string) []upstream.Item {
	if len(drop) == 0 {
		return items
	}
	out := make([]upstream.Item, 0, len(items))
	for _, it := range items {
		if _, ok := drop[it.Key]; !ok {
			out = append(out, it)
		}
	}
	return out
}

func sortPinItems(items []pinItem) {
	sort.Slice(items, func(i, j int) bool {
		if items[i].Kind != items[j].Kind {
			return items[i].Kind < items[j].Kind
		}
		return items[i].Name < items[j].Name
	})
}

// report is pinning's part of the status.
func (p *Pinner) Report() *PinReport {
	if p.Off() {
		return &PinReport{Mode: config.PinOff}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &PinReport{Mode: p.mode, LockFile: p.path, Servers: map[string]pinState{}}
	if p.lockErr != nil {
		r.Error = p.lockErr.Error()
	}
	for s, st := range p.servers {
		if len(st.Drift)+len(st.Withheld)+len(st.Findings) > 0 {
			r.Servers[s] = st
		}
	}
	return r
}

// Of is the report of the servers shows admits alone, for a caller whose
// view hides the others; r itself is not changed.
func (r *PinReport) Of(shows func(server string) bool) *PinReport {
	if r == nil {
		return nil
	}
	out := *r
	out.Servers = make(map[string]pinState, len(r.Servers))
	for s, st := range r.Servers {
		if shows(s) {
			out.Servers[s] = st
		}
	}
	return &out
}

// otherTools lists, for each server, the names of every other server's
// tools that its descriptions should not mention (pin.OtherNames).
func otherTools(servers []Server, scheme naming.Scheme) map[string][]string {
	tools := map[string][]string{}
	unprefixed := map[string]bool{}
	for _, s := range servers {
		unprefixed[s.Name] = s.Spec.Unprefixed()
		tools[s.Name] = []string{}
		for _, it := range s.Items.Tools {
			tools[s.Name] = append(tools[s.Name], it.Key)
		}
	}
	return pin.OtherNames(tools, ExportedName(scheme, unprefixed))
}

// ExportedName is the name the host sees for a server's tool: the server's
// own for an unprefixed server. mcptrunk pin names other servers' tools
// with it too, so that its findings are those serve reports.
func ExportedName(scheme naming.Scheme, unprefixed map[string]bool) func(server, key string) string {
	return func(server, key string) string {
		if unprefixed[server] {
			return key
		}
		return scheme.Name(server, key)
	}
}

// WithheldWhy says why a tool or prompt the host asked for by its exported
// name is withheld, if it is.
func (c *Catalog) WithheldWhy(server, kind, name string) (string, bool) {
	k := pin.Tools
	if kind == "prompt" {
		k = pin.Prompts
	}
	raw := name // an unprefixed server's own name
	if !c.Unprefixed(server) {
		var ok bool
		if _, raw, ok = c.Scheme.Split(name); !ok {
			return "", false
		}
	}
	why, ok := c.Withheld[server][k][raw]
	return why, ok
}

// PinLines holds the listed servers against the lockfile, recording nothing,
// and describes what pinning finds, one line per item, for mcptrunk check.
// The first line says the mode and the lockfile.
func PinLines(o config.TrunkOptions, servers []Server, logger *slog.Logger) []string {
	p := NewPinner(o, false, logger)
	if p.Off() {
		return []string{"pinning: off"}
	}
	others := otherTools(servers, naming.Scheme{Prefix: o.Prefix})
	for _, s := range servers {
		if s.Listed {
			p.admit(s.Name, s.Items, others[s.Name], true)
		}
	}
	r := p.Report()
	lines := []string{fmt.Sprintf("pinning: %s, lockfile %s", r.Mode, r.LockFile)}
	if r.Error != "" {
		lines = append(lines, "pinning: "+r.Error)
	}
	names := make([]string, 0, len(r.Servers))
	for s := range r.Servers {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		st := r.Servers[s]
		for _, group := range []struct {
			label string
			items []pinItem
		}{{"drift", st.Drift}, {"withheld", st.Withheld}, {"finding", st.Findings}} {
			for _, it := range group.items {
				lines = append(lines, fmt.Sprintf("pinning: %s: server %q, %s %q: %s", group.label, s, pin.Kind(it.Kind).Singular(), it.Name, it.What))
			}
		}
	}
	return lines
}

// PinDefs is a server's catalog as pinning takes it.
func PinDefs(cat upstream.Catalog) map[pin.Kind][]pin.Def {
	defs := map[pin.Kind][]pin.Def{}
	for kind, items := range map[pin.Kind][]upstream.Item{pin.Tools: cat.Tools, pin.Prompts: cat.Prompts, pin.Resources: cat.Resources, pin.Templates: cat.Templates} {
		for _, it := range items {
			defs[kind] = append(defs[kind], pin.Def{Key: it.Key, Raw: it.Raw})
		}
	}
	return defs
}

// unusableLock is why nothing of server is served under enforce when the
// lockfile cannot be read (err).
func unusableLock(err error, server string) string {
	return fmt.Sprintf("pinning is enforced and the lockfile cannot be used (%v): nothing of server %q is trusted", err, server)
}
