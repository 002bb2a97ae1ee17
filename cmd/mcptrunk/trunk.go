package main

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// oneShot says how startTrunk starts a one-shot command's trunk.
type oneShot struct {
	// pick returns the servers of the config to start (nil: all); the
	// others are not part of the trunk, and never started.
	pick func(*config.Config) []config.Spec
	// caps are the client capabilities the servers are told of, as if a
	// host had declared them (nil: none).
	caps json.RawMessage
}

// startTrunk loads the config and starts its servers with no host behind
// the trunk, as o says (by default every server, told of no client
// capabilities), then waits until all have started or failed. The caller
// closes the trunk.
func (e *environment) startTrunk(ctx context.Context, o oneShot) (*proxy.Trunk, error) {
	logger, err := e.logger(slog.LevelWarn)
	if err != nil {
		return nil, err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	logConfigWarnings(logger, cfg)
	if o.pick != nil {
		cfg.Servers = o.pick(cfg)
	}
	t := proxy.New(cfg, &proxy.Options{Logger: logger, Version: version(), PageSize: -1})
	t.Start(o.caps, "")
	progress := e.startProgress(t.Fleet)
	select {
	case <-t.Fleet().Settled():
	case <-ctx.Done():
	}
	progress.Stop()
	return t, nil
}
