package main

import (
	"context"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/proxy"
)

// startTrunk loads the config and starts every server with no host behind
// the trunk (so upstreams are told of no client capabilities), then waits
// until all have started or failed, showing which are pending on stderr.
// The caller closes the trunk.
func (e *environment) startTrunk(ctx context.Context) (*proxy.Trunk, error) {
	logger, err := e.logger(slog.LevelWarn)
	if err != nil {
		return nil, err
	}
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	logConfigWarnings(logger, cfg)
	t := proxy.New(cfg, &proxy.Options{Logger: logger, Version: version(), PageSize: -1})
	t.Start(nil, "")
	progress := e.startProgress(t.Fleet)
	select {
	case <-t.Fleet().Settled():
	case <-ctx.Done():
	}
	progress.Stop()
	return t, nil
}
