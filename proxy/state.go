package proxy

import (
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/access"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// state is one generation of what the operator configured, as the trunk
// applies it: the config, the access rules and the pinning made from it,
// and the catalog of the servers under them. Reload replaces it whole
// (Trunk.state); a request takes one at its start and reads only that one,
// so no request is admitted under one generation's rules and answered
// under another's limits or catalog.
//
// The config, rules and pinning are fixed. The catalog is built lazily
// for the generation: a server change (Trunk.changes) makes the next read
// rebuild it from the servers as they are then, under this generation's
// export policy and pins. A request that reads it again after waking a
// server thus sees the server's new items through its own generation.
type state struct {
	cfg    *config.Config
	access *access.Rules   // trunk.policy and trunk.profiles
	pins   *catalog.Pinner // pinning under cfg; shared with the generations before while trunk.pin and trunk.lockFile stay
	trunk  *Trunk          // whose servers the catalog lists

	rebuildMu sync.Mutex    // serialises the catalog's rebuilds
	built     atomic.Uint64 // the count of Trunk.changes the catalog includes
	cat       atomic.Pointer[catalog.Catalog]
}

// newState is the generation of cfg for t, with pins as its pinning and a
// catalog of no items (names split with cfg's prefix) until the first
// server change.
func newState(t *Trunk, cfg *config.Config, pins *catalog.Pinner) *state {
	st := &state{cfg: cfg, access: access.New(cfg.Trunk, t.logger), pins: pins, trunk: t}
	st.cat.Store(&catalog.Catalog{Scheme: catalog.PolicyOf(cfg.Trunk).Scheme})
	return st
}

// catalog returns the generation's catalog including every server change
// made before the call, rebuilding it first if needed. The common case,
// nothing changed, takes no lock: the hot path of every routed request.
func (st *state) catalog() *catalog.Catalog {
	want := st.trunk.changes.Load()
	if st.built.Load() >= want {
		return st.cat.Load()
	}
	st.rebuildMu.Lock()
	defer st.rebuildMu.Unlock()
	if st.built.Load() < want {
		// Changes that arrive during the build are counted after now, so
		// they make the next caller build again.
		now := st.trunk.changes.Load()
		st.cat.Store(st.trunk.build(st))
		st.built.Store(now)
	}
	return st.cat.Load()
}

// policy is the generation's export policy.
func (st *state) policy() catalog.Policy { return catalog.PolicyOf(st.cfg.Trunk) }

// sessionView is cat as session s's caller sees it now under the
// generation's rules: the one place a caller's view is taken, for its
// requests (request.view), for what reaches it unasked (resource updates, list
// changes) and for what it is told of the servers (initialize,
// server/discover). It is built from the caller's current credentials
// (Session.SetClaims), with the names fitted to the session's host
// (Session.fitNames).
func (st *state) sessionView(s *Session, cat *catalog.Catalog) *catalog.Catalog {
	return st.access.View(cat.Fitted(int(s.nameBudget.Load())), *s.caller.Load())
}

// view is session s's caller's view of the generation's catalog as it is
// now.
func (st *state) view(s *Session) *catalog.Catalog { return st.sessionView(s, st.catalog()) }
