package main

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// serveCommand runs the stdio MCP server, reloading the config when the
// file changes or on SIGHUP.
type serveCommand struct {
	metricsAddr string // --metrics: where to serve /metrics
}

func (c *serveCommand) flags(fs *flagSet) {
	fs.StringVar(&c.metricsAddr, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics (a loopback address, such as 127.0.0.1:9464)")
}

// configPoll is how often the config file is checked for changes.
const configPoll = time.Second

func (c *serveCommand) run(ctx context.Context, env *environment) error {
	logger, err := env.logger(slog.LevelInfo)
	if err != nil {
		return err
	}
	path, err := env.configPath()
	if err != nil {
		logger.Error("cannot find the config", "error", err)
		return err
	}
	cfg, err := config.Load(path)
	if err != nil {
		logger.Error("cannot load the config", "error", err)
		return err
	}
	obs, err := startObserve(ctx, c.metricsAddr, os.Getenv, logger)
	if err != nil {
		logger.Error("cannot start the metrics", "error", err)
		return err
	}
	defer obs.close()
	traces, err := startTraces(ctx, logger)
	if err != nil {
		logger.Error("cannot start the traces", "error", err)
		return err
	}
	defer traces.close()
	out := env.stdout
	if out == os.Stdout {
		// stdout is the protocol channel: keep it to ourselves, and send
		// anything else in the process that prints to stdout to stderr.
		os.Stdout = os.Stderr
	}
	logger.Info("mcptrunk starting", "servers", len(cfg.Servers), "config", path, "version", version())
	audits := startAudit(cfg.Trunk.Audit, logger)
	defer audits.close()
	t := proxy.New(cfg, &proxy.Options{
		Logger: logger, Version: version(), Restart: upstream.DefaultRestartPolicy, RecordPins: true,
		Observers: slices.Concat(obs.observers(), traces.observers(), audits.observers()),
	})
	if err := obs.attach(t); err != nil {
		logger.Error("cannot start the metrics", "error", err)
		return err
	}

	watchCtx, stopWatching := context.WithCancel(ctx)
	// SIGHUP is caught from here on, before the host can be answered:
	// installed by the watcher goroutine instead, a SIGHUP sent as soon as
	// the handshake is done could still find its default action and end
	// the trunk.
	hup, stopHUP := notifyReload()
	var watcher sync.WaitGroup
	watcher.Go(func() {
		defer stopHUP()
		config.Watch(watchCtx, path, configPoll, hup, func(cfg *config.Config, err error) {
			if err != nil {
				logger.Error("config change rejected; the running servers stay as they are", "error", err)
				return
			}
			logger.Info("config changed; reloading")
			audits.reloaded(cfg, logger)
			if err := t.Reload(watchCtx, cfg); err != nil {
				logger.Warn("config reloaded with failures", "error", err)
			}
		})
	})
	err = t.Serve(ctx, env.stdin, out)
	stopWatching()
	watcher.Wait()
	return err
}
