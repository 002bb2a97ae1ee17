package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// serveCommand runs the stdio MCP server.
type serveCommand struct{}

func (serveCommand) run(ctx context.Context, env *environment) error {
	logger, err := env.logger(slog.LevelInfo)
	if err != nil {
		return err
	}
	cfg, err := env.loadConfig()
	if err != nil {
		logger.Error("cannot load the config", "error", err)
		return err
	}
	out := env.stdout
	if out == os.Stdout {
		// stdout is the protocol channel: keep it to ourselves, and send
		// anything else in the process that prints to stdout to stderr.
		os.Stdout = os.Stderr
	}
	logger.Info("mcptrunk starting", "servers", len(cfg.Servers), "version", version())
	return proxy.Serve(ctx, cfg, env.stdin, out, &proxy.Options{
		Logger: logger, Version: version(), Restart: upstream.DefaultRestartPolicy,
	})
}
