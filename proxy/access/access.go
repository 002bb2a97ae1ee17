// Package access applies trunk.policy and trunk.profiles: it decides which
// items each caller may see and use.
//
// A caller's view is the catalog it is served, searched and routed through
// (catalog.Catalog.Restrict), built once per caller and catalog and cached
// under the caller's whole identity, so no view ever serves another
// identity.
package access

import (
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/policy"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// Rules are one config's policy and profiles, compiled.
type Rules struct {
	policy    *policy.Policy
	operators *policy.Role // trunk.policy.operators; nil: no caller with a token is one
	profiles  map[string]policy.Profile
	// shapes are the profiles' own overrides, by profile and then server
	// identifier, each with the key its shaped catalogs are cached under.
	shapes map[string]shape
	// broken: the policy did not compile (Parse refuses such a config, so
	// only a config built in code gets here): everything is denied.
	broken bool
	logger *slog.Logger
	warned sync.Map // rule + error: logged once (Allows)
	views  sync.Map // viewKey -> *cachedView
	size   int      // entries in views, roughly: the cache is dropped past maxViews
	sizeMu sync.Mutex
}

// maxViews bounds the cache: past it the cache starts again, which costs
// each caller one rebuild.
const maxViews = 4096

// New compiles the trunk's policy and profiles; the profiles' servers are
// held by identifier, as catalog entries name them.
func New(t config.TrunkOptions, logger *slog.Logger) *Rules {
	r := &Rules{logger: logger, profiles: map[string]policy.Profile{}}
	p, err := policy.Compile(t.Policy.Rules)
	if err != nil {
		logger.Error("trunk.policy does not compile: everything is denied", "error", err)
		r.broken = true
	}
	r.policy = p
	if r.operators, err = policy.CompileRole(t.Policy.Operators); err != nil {
		logger.Error("trunk.policy.operators does not compile: no caller is an operator", "error", err)
	}
	for name, pr := range t.Profiles {
		ids := make([]string, 0, len(pr.Servers))
		for _, s := range pr.Servers {
			if id, err := naming.ServerID(s); err == nil {
				s = id
			}
			ids = append(ids, s)
		}
		pr.Servers = ids
		r.profiles[name] = pr
	}
	for name, byServer := range t.ProfileOverrides {
		byID := make(map[string]config.Overrides, len(byServer))
		for s, o := range byServer {
			if id, err := naming.ServerID(s); err == nil {
				s = id
			}
			byID[s] = o
		}
		if r.shapes == nil {
			r.shapes = map[string]shape{}
		}
		enc, _ := json.Marshal(byID) // map keys sorted: one encoding per shape
		r.shapes[name] = shape{overrides: byID, key: name + "\x00" + string(enc)}
	}
	return r
}

// shape is one profile's own overrides by server identifier, and the key
// of the catalogs exported under them (catalog.Catalog.Profiled): the
// overrides' whole content, so that the rules before a reload and after
// it never share a shaped catalog they shape differently.
type shape struct {
	overrides map[string]config.Overrides
	key       string
}

// Overrides are the overrides the caller's items of a server are shaped
// and called under: the server's own (own), with the caller's profile's
// set over them. The catalog the caller is served was exported under the
// same (View), so what it lists is what its calls carry.
func (r *Rules) Overrides(c Caller, server string, own config.Overrides) config.Overrides {
	if o, ok := r.shapes[c.Profile].overrides[server]; ok {
		return own.Over(o)
	}
	return own
}

// HasProfile reports whether the config has a profile of that name.
func (r *Rules) HasProfile(name string) bool {
	_, ok := r.profiles[name]
	return ok
}

// Profiles are the profiles' names and descriptions.
func (r *Rules) Profiles() map[string]string {
	out := make(map[string]string, len(r.profiles))
	for name, p := range r.profiles {
		out[name] = p.Description
	}
	return out
}

// Restricts reports whether the caller gets a view rather than the whole
// catalog.
func (r *Rules) Restricts(c policy.Caller) bool {
	return r.policy != nil || r.broken || c.Profile != ""
}

// allows decides one item for one caller: the caller's profile shows it
// (the trunk's own tools are in every profile) and the policy allows it.
// A rule that cannot be evaluated denies the item, and is logged (the rule
// and the error, never a claim's value) once per rule and error: a caller
// without a claim a rule reads fails it for every item of a view.
func (r *Rules) allows(c policy.Caller, it policy.Item) bool {
	if r.broken {
		return false
	}
	if c.Profile != "" && it.Server != naming.TrunkServer {
		pr, ok := r.profiles[c.Profile]
		if !ok || !pr.Admits(it) {
			return false
		}
	}
	d := r.policy.Decide(c, it)
	if d.Err != nil {
		if _, seen := r.warned.LoadOrStore(d.Rule+"\x00"+d.Err.Error(), true); !seen {
			r.logger.Warn("a policy rule could not be evaluated: denied (said once per rule and error)", "subject", c.Subject, "server", it.Server, "item", logkey.Clip(it.Name), "rule", d.Rule, "error", d.Err)
		}
	}
	return d.Allowed
}

// Operator reports whether a caller signed in with an access token may
// read the operators' pages (trunk.policy.operators). It fails closed: an
// expression that cannot be evaluated for the caller does not match, and
// is logged (never a claim's value) once per error.
func (r *Rules) Operator(c policy.Caller) bool {
	ok, err := r.operators.Holds(c)
	if err != nil {
		if _, seen := r.warned.LoadOrStore("operators\x00"+err.Error(), true); !seen {
			r.logger.Warn("trunk.policy.operators could not be evaluated: not an operator (said once per error)", "subject", c.Subject, "rule", r.operators.String(), "error", err)
		}
	}
	return ok
}

type cachedView struct {
	cat  *catalog.Catalog
	view *catalog.Catalog
}

// Caller is a session's caller with the key of its views, worked out
// once per session.
type Caller struct {
	policy.Caller
	key string
}

// NewCaller is the caller an access token proved (no subject and no
// claims for the stdio host and the static token), through a profile or
// none.
func NewCaller(subject string, claims map[string]any, profile string) Caller {
	c := policy.Caller{Subject: subject, Claims: claims, Profile: profile}
	return Caller{Caller: c, key: key(c)}
}

// View is cat as the caller sees it: cat itself when nothing restricts
// the caller, else its view, built once per catalog for each identity:
// exported in its profile's shape when the profile carries overrides
// (catalog.Catalog.Profiled), then restricted to what it may see.
func (r *Rules) View(cat *catalog.Catalog, c Caller) *catalog.Catalog {
	if !r.Restricts(c.Caller) {
		return cat
	}
	if v, ok := r.views.Load(c.key); ok && v.(*cachedView).cat == cat {
		return v.(*cachedView).view
	}
	view := r.FreshView(cat, c)
	if _, loaded := r.views.Swap(c.key, &cachedView{cat: cat, view: view}); !loaded {
		r.sizeMu.Lock()
		if r.size++; r.size > maxViews {
			r.views.Clear()
			r.size = 0
		}
		r.sizeMu.Unlock()
	}
	return view
}

// FreshView is View built afresh and kept nowhere: for a catalog that is
// no longer the current one (what a host was last served), whose view in
// the cache would only push out the current one's. (A profile's shaped
// catalog is kept with cat itself, catalog.Catalog.Profiled.)
func (r *Rules) FreshView(cat *catalog.Catalog, c Caller) *catalog.Catalog {
	if !r.Restricts(c.Caller) {
		return cat
	}
	sh := r.shapes[c.Profile]
	return cat.Profiled(sh.key, sh.overrides).Restrict(func(it policy.Item) bool { return r.allows(c.Caller, it) })
}

// key is the caller's whole identity as the rules may read it: two
// callers share a view only when everything a rule could tell them apart
// by is the same.
func key(c policy.Caller) string {
	claims, _ := json.Marshal(c.Claims) // map keys sorted: one encoding per identity
	return c.Profile + "\x00" + c.Subject + "\x00" + string(claims)
}
