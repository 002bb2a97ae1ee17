package main

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// startTrunk loads the config and starts every server with no host behind
// the trunk (so upstreams are told of no client capabilities), then waits
// until all have started or failed. The caller closes the trunk.
func (e *environment) startTrunk(ctx context.Context) (*proxy.Trunk, error) {
	return e.startTrunkOf(ctx, oneShot{})
}

// oneShot says how startTrunkOf starts a one-shot command's trunk.
type oneShot struct {
	// pick returns the servers of the config to start (nil: all); the
	// others are not part of the trunk, and never started.
	pick func(*config.Config) []config.Spec
	// caps are the client capabilities the servers are told of, as if a
	// host had declared them (nil: none).
	caps json.RawMessage
}

// startTrunkOf is startTrunk as o says.
func (e *environment) startTrunkOf(ctx context.Context, o oneShot) (*proxy.Trunk, error) {
	logger, err := e.logger(slog.LevelWarn)
	if err != nil {
		return nil, err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	if o.pick != nil {
		cfg.Servers = o.pick(cfg)
	}
	t := proxy.New(cfg, &proxy.Options{Logger: logger, Version: version(), PageSize: -1})
	t.Start(o.caps, "")
	select {
	case <-t.Host().Settled():
	case <-ctx.Done():
	}
	return t, nil
}
