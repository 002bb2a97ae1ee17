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
// flight. The trunk options that can change at runtime (maxNameLength) take
// effect at once. Reloads are serialised; the error joins every server that
// failed to start (they are running the new config anyway, as failed).
func (t *Trunk) Reload(ctx context.Context, cfg *config.Config) error {
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	old := t.cfg.Swap(cfg)
	t.access.Store(access.New(cfg.Trunk, t.logger)) // the views anew, under the rules in force
	t.creds.Configure(cfg.Servers)
	if old.Trunk.Pin != cfg.Trunk.Pin || old.Trunk.LockFile != cfg.Trunk.LockFile {
		t.pins.Store(catalog.NewPinner(cfg.Trunk, t.record, t.logger))
		t.serverChanged("")
	}
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

	oldSpecs := config.ByServerID(old.Servers)
	newSpecs := config.ByServerID(cfg.Servers)
	var remove, add []config.Spec
	for id, o := range oldSpecs {
		if n, ok := newSpecs[id]; !ok || !n.Equal(o) {
			remove = append(remove, o)
		}
	}
	for id, n := range newSpecs {
		if o, ok := oldSpecs[id]; !ok || !n.Equal(o) {
			add = append(add, n)
		}
	}
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
