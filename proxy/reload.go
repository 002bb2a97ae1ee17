package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/access"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
)

// Reload applies a new config to a running trunk: servers that are gone are
// shut down, new ones started, and those whose spec changed restarted;
// servers whose spec is unchanged are not disturbed, nor are their calls in
// flight. The trunk options that can change at runtime (maxNameLength,
// the rules, pinning) take effect at once, as one new generation (state):
// a request begun before ends under the generation it began with. Reloads
// are serialised; the error joins every server that failed to start (they
// are running the new config anyway, as failed).
func (t *Trunk) Reload(ctx context.Context, cfg *config.Config) error {
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	was := t.state.Load()
	old := was.cfg
	pins := was.pins
	if old.Trunk.Pin != cfg.Trunk.Pin || old.Trunk.LockFile != cfg.Trunk.LockFile {
		pins = catalog.NewPinner(cfg.Trunk, t.record, t.logger)
	}
	// The new generation whole: requests that began before finish under
	// the old one. Its catalog is built under the new policy and pins at
	// its first read; the announcer is woken to compare it with what the
	// hosts were served, and at the end each host is told the lists the
	// new rules changed for it.
	t.state.Store(newState(t, cfg, pins))
	t.serverChanged("")
	defer t.announceViews(was.access)
	t.creds.Configure(cfg.Servers)
	t.signIn.Configure(cfg)
	t.limiter.Configure(cfg.Trunk.Limits)
	for _, s := range t.hosts.all() {
		s.setLimits(cfg.Trunk.MaxMessageBytes)
	}
	select {
	case <-t.started:
	default:
		return nil // not started: Start will use the new config
	}
	// Let the first start finish so every server is registered once.
	select {
	case <-t.fleet.Settled():
	case <-ctx.Done():
		return ctx.Err()
	}

	remove, add := config.Diff(old.Servers, cfg.Servers)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	collect := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for _, spec := range remove {
		wg.Go(func() {
			id, _ := naming.ServerID(spec.Name)
			t.logger.Info("config reload: stopping server", "server", id)
			collect(t.fleet.Remove(ctx, id))
			t.own.Restart(ctx, id) // sessions' and callers' own instances of it too
			t.perUser.Restart(ctx, id)
		})
	}
	wg.Wait()
	for _, spec := range add {
		wg.Go(func() {
			t.logger.Info("config reload: starting server", "server", spec.Name)
			collect(t.fleet.Add(ctx, spec))
		})
	}
	wg.Wait()
	t.serverChanged("") // maxNameLength may have changed even if no server did
	if len(errs) > 0 {
		return fmt.Errorf("config reload: %w", errors.Join(errs...))
	}
	return nil
}

// announceViews sends each host list_changed for each list it has been
// served that the rules now show it differently (old: the rules before),
// though the catalog may not have changed: a caller's view is its catalog.
func (t *Trunk) announceViews(old *access.Rules) {
	select {
	case <-t.started:
	default:
		return // no host has been served a list
	}
	st := t.state.Load()
	cat := st.catalog()
	for _, s := range t.hosts.all() {
		caller := *s.caller.Load()
		t.announceViewChange(s, old.View(cat, caller), st.access.View(cat, caller))
	}
}

// announceView sends session s list_changed for each list it has been
// served that differs between what its caller saw (was) and sees now
// (is), under the rules in force: its token now carries other claims.
func (t *Trunk) announceView(s *Session, was, is access.Caller) {
	select {
	case <-t.started:
	default:
		return // no host has been served a list
	}
	st := t.state.Load()
	cat := st.catalog()
	t.announceViewChange(s, st.access.View(cat, was), st.access.View(cat, is))
}

// announceViewChange sends s list_changed for each list it has been served
// that differs between two views of it.
func (t *Trunk) announceViewChange(s *Session, old, now *catalog.Catalog) {
	t.announceMu.Lock()
	seen := t.seen
	t.announceMu.Unlock()
	served := func(l catalog.List) bool { return seen[l] != nil }
	for _, m := range viewChanged(old, now, served) {
		if err := s.Notify(m, nil); err != nil {
			t.logger.Debug("announcing a change failed", "method", m, "error", err)
		}
	}
}
