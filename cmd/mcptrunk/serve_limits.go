package main

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
)

// sharedLimits is where serve keeps trunk.limits' counts: with the state
// store in Redis, there (on the store's connection), so that every
// replica sharing it holds each limit exactly, onUnavailable saying what
// a check Redis cannot answer does; otherwise in the process (nil). The
// embedded store is one process's file: its counts would be shared no
// more than memory's, and a write to disk is not what a limit check may
// cost.
func sharedLimits(store *statestore.Store, st config.State, logger *slog.Logger) *limits.Options {
	r, ok := store.Backend().(*statestore.Redis)
	if !ok {
		return nil
	}
	logger.Info("trunk.limits counted in the shared store", "store", r.Where(), "onUnavailable", st.OnUnavailable)
	return &limits.Options{Shared: r.Client(), Prefix: statestore.RedisPrefix, Store: r.Where(),
		AllowUnavailable: st.OnUnavailable == config.StateAllow}
}
