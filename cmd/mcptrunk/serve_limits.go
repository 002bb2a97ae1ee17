package main

import (
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
)

// sharedLimits is where serve keeps trunk.limits' counts: with trunk.state
// in Redis, there, so that every replica sharing it holds each limit
// exactly (onUnavailable saying what a check Redis cannot answer does);
// otherwise in the process (nil options, no store opened). The embedded
// store is one process's file: its counts would be shared no more than
// memory's, and a write to disk is not what a limit check may cost. close
// releases the connection.
func sharedLimits(st config.State, logger *slog.Logger) (opts *limits.Options, close func(), err error) {
	if !st.Redis() {
		return nil, func() {}, nil
	}
	r, err := statestore.OpenRedis(st.URL)
	if err != nil {
		return nil, nil, err
	}
	logger.Info("trunk.limits counted in the shared store", "store", r.Where(), "onUnavailable", st.OnUnavailable)
	return &limits.Options{Shared: r.Client(), Prefix: statestore.RedisPrefix, Store: r.Where(),
		AllowUnavailable: st.OnUnavailable == config.StateAllow}, func() { _ = r.Close() }, nil
}
