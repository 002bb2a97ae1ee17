package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/internal/textview"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// serveCommand runs the stdio MCP server, reloading the config when the
// file changes or on SIGHUP.
type serveCommand struct {
	metricsAddr string // --metrics: where to serve /metrics
	hostPrefix  string // --host-prefix: what the host puts before every name (see fitHostPrefix)
	profile     string // --profile: the view of trunk.profiles the stdio host gets
	http        httpFlags
}

func (c *serveCommand) flags(fs *flagSet) {
	fs.StringVar(&c.metricsAddr, "metrics", "", "serve Prometheus metrics at http://`ADDR`/metrics (a loopback address, such as 127.0.0.1:9464)")
	fs.StringVar(&c.hostPrefix, "host-prefix", "", "the `PREFIX` the launching host puts before each of the trunk's tool names (Claude Code: mcp__<its name for the trunk>__); names are shortened so that prefix and name fit in 64 characters. install sets it")
	fs.StringVar(&c.profile, "profile", "", "serve the stdio host the `NAME`d view of trunk.profiles (the HTTP listener serves each at <path>/p/NAME)")
	c.http.register(fs)
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
		return fatal(logger, "cannot find the config", err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		return fatal(logger, "cannot load the config", err)
	}
	logConfigWarnings(logger, cfg)
	fitHostPrefix(cfg, c.hostPrefix, logger)
	if _, ok := cfg.Trunk.Profiles[c.profile]; c.profile != "" && !ok {
		names := strings.Join(slices.Sorted(maps.Keys(cfg.Trunk.Profiles)), ", ")
		return fatal(logger, "cannot serve", fmt.Errorf("--profile %s: trunk.profiles has no such profile (it has: %s)", c.profile, cmp.Or(names, "none")))
	}
	httpCfg := c.http.resolve(cfg.Trunk.HTTP)
	var down *httpDownstream
	if httpCfg.Listen != "" {
		if down, err = listenHTTP(httpCfg, &c.http, logger); err != nil {
			return fatal(logger, "cannot serve HTTP", err)
		}
		defer func() {
			if down.srv == nil { // failed before serving: serveShared never closed it
				_ = down.ln.Close()
			}
		}()
	} else if c.http.stdio || c.http.tokenFile != "" || c.http.tlsCert != "" || len(c.http.origins) > 0 {
		err := usagef("--stdio, --token-file, --tls-cert, --tls-key and --allow-origin go with --http (or trunk.http.listen)")
		return fatal(logger, "cannot serve", err)
	}
	fmt.Fprint(env.stderr, textview.ServeHint(isTerminal(env.stdin), down == nil || c.http.stdio))
	// The HTTP listener serves /metrics too, so it needs the metrics.
	metricsAddr := c.metricsListen(cfg)
	obs, err := startObserve(ctx, metricsAddr, down != nil, os.Getenv, logger)
	if err != nil {
		return fatal(logger, "cannot start the metrics", err)
	}
	defer obs.close()
	traces, err := startTraces(ctx, logger)
	if err != nil {
		return fatal(logger, "cannot start the traces", err)
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
	var signingKey []byte
	if down != nil {
		signingKey = down.key
	}
	startState := cfg.Trunk.State
	store, err := openState(cfg.Trunk.State, logger)
	if errors.Is(err, statestore.ErrInUse) && down == nil {
		// A host's own stdio trunk beside another on the same config:
		// only callers with an identity (HTTP) keep anything there.
		logger.Warn("the state store is in use by another mcptrunk; this stdio trunk keeps its state in memory", "error", err)
		store, err = openState(config.State{}, logger)
	}
	if err != nil {
		return fatal(logger, "cannot open the state store", err)
	}
	defer store.Close()
	t := proxy.New(cfg, &proxy.Options{
		Logger: logger, Version: version(), Restart: upstream.DefaultRestartPolicy, RecordPins: true,
		Observers:  slices.Concat(obs.observers(), traces.observers(), audits.observers()),
		SigningKey: signingKey, Profile: c.profile, ExactHostPrefix: c.hostPrefix != "", State: store,
		Limits: sharedLimits(store, cfg.Trunk.State, logger),
	})
	if down != nil {
		t.Share() // before anything starts: every session shares the upstreams
	}
	if err := obs.attach(t); err != nil {
		return fatal(logger, "cannot start the metrics", err)
	}
	if down != nil {
		down.serve(t, obs.metricsOrNil())
	}

	watchCtx, stopWatching := context.WithCancel(ctx)
	// SIGHUP is caught from here on, before the host can be answered:
	// installed by the watcher goroutine instead, a SIGHUP sent as soon as
	// the handshake is done could still find its default action and end
	// the trunk.
	hup, stopHUP := notifyReload()
	var watcher sync.WaitGroup
	if cfg.Trunk.State.Configured {
		watcher.Go(func() { store.Watch(watchCtx, stateWatchEvery) })
	}
	watcher.Go(func() {
		releaseAfterStartup(watchCtx, t, startupRelease, func() { debug.FreeOSMemory(); releaseBinaryPages() })
	})
	watcher.Go(func() {
		defer stopHUP()
		config.Watch(watchCtx, path, configPoll, hup, func(cfg *config.Config, err error) {
			if err != nil {
				logger.Error("config change rejected; the running servers stay as they are", "error", err)
				return
			}
			logger.Info("config changed; reloading")
			logConfigWarnings(logger, cfg)
			fitHostPrefix(cfg, c.hostPrefix, logger)
			audits.reloaded(cfg, logger)
			metricsReloaded(metricsAddr, c.metricsListen(cfg), logger)
			if cfg.Trunk.State != startState {
				logger.Warn("trunk.state changed: the state store in use stays until mcptrunk restarts")
			}
			if err := t.Reload(watchCtx, cfg); err != nil {
				logger.Warn("config reloaded with failures", "error", err)
			}
		})
	})
	if down == nil {
		err = t.Serve(ctx, env.stdin, out)
	} else {
		err = serveShared(ctx, t, down, c.http.stdio, env, out)
	}
	stopWatching()
	watcher.Wait()
	return err
}

// serveShared runs the HTTP downstream (and the stdio host beside it with
// --stdio) until ctx ends or the stdio host leaves, then shuts everything
// down: sessions first, then the upstreams.
func serveShared(ctx context.Context, t *proxy.Trunk, down *httpDownstream, stdio bool, env *environment, out io.Writer) error {
	var err error
	if stdio {
		err = t.Attach(jsonrpc.NewLineReader(jsonrpc.Unclosable(env.stdin)), jsonrpc.NewLineWriter(out), nil).Run(ctx)
	} else {
		<-ctx.Done()
	}
	return errors.Join(err, down.close(), t.Close(context.WithoutCancel(ctx)))
}
