package main

import (
	"context"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// startTrunk loads the config and starts every server with no host behind
// the trunk (so upstreams are told of no client capabilities), then waits
// until all have started or failed. The caller closes the trunk.
func (e *environment) startTrunk(ctx context.Context) (*proxy.Trunk, error) {
	return e.startTrunkOf(ctx, nil)
}

// startTrunkOf is startTrunk of the servers pick keeps of the config's
// (nil: all); the others are not part of the trunk, and never started.
func (e *environment) startTrunkOf(ctx context.Context, pick func(*config.Config) []config.Spec) (*proxy.Trunk, error) {
	logger, err := e.logger(slog.LevelWarn)
	if err != nil {
		return nil, err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	if pick != nil {
		cfg.Servers = pick(cfg)
	}
	t := proxy.New(cfg, &proxy.Options{Logger: logger, Version: version(), PageSize: -1})
	t.Start(nil, "")
	select {
	case <-t.Host().Settled():
	case <-ctx.Done():
	}
	return t, nil
}
