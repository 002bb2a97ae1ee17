package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/textview"
	"github.com/mcptrunk/mcptrunk/internal/usercreds"
	"github.com/mcptrunk/mcptrunk/internal/wording"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
	"github.com/mcptrunk/mcptrunk/proxy/httpserve"
	"github.com/mcptrunk/mcptrunk/proxy/signin"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// configSummary counts a config's servers for check's first line: "ok"
// only when every entry can be used, else how many cannot (each said
// below), so that a config of three unusable entries never reads as fine.
func configSummary(cfg *config.Config) string {
	unusable := 0
	for _, s := range cfg.Servers {
		if s.Invalid != nil {
			unusable++
		}
	}
	n := plural(len(cfg.Servers), "server", "servers")
	switch {
	case unusable == 0:
		return "ok, " + n
	case unusable == len(cfg.Servers) && unusable == 1:
		return n + ", which cannot be used"
	case unusable == len(cfg.Servers):
		return n + ", none of which can be used"
	}
	return fmt.Sprintf("%s, %d of which cannot be used", n, unusable)
}

// checkCommand validates the config, connects every server while printing
// its progress, prints a status table, and fails when any server failed.
// A lazy server with a cached catalog is not started (it shows as
// sleeping, with the cache's age); --refresh starts every server once and
// rewrites its cache entry. --strict fails on the config's warnings too
// (keys mcptrunk does not know), for CI.
type checkCommand struct{ refresh, strict bool }

func (c *checkCommand) flags(fs *flagSet) {
	fs.BoolVar(&c.refresh, "refresh", false, "start every server, lazy ones too, and rewrite its cached catalog")
	fs.BoolVar(&c.strict, "strict", false, "fail on the config's warnings too (keys mcptrunk does not know)")
}

func (cc *checkCommand) run(ctx context.Context, env *environment) error {
	logger, err := env.logger(slog.LevelError)
	if err != nil {
		return err
	}
	path, err := env.configPath()
	if err != nil {
		fmt.Fprintf(env.stdout, "config: none\n%v\n", err)
		return exitError(1)
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintf(env.stdout, "config: %s: invalid\n%v\n", path, err)
		return exitError(1)
	}
	fmt.Fprintf(env.stdout, "config: %s: %s\n", path, configSummary(cfg))
	for _, w := range cfg.Warnings {
		fmt.Fprintf(env.stdout, "warning: %s\n", w)
	}
	for _, n := range cfg.Notes {
		fmt.Fprintf(env.stdout, "note: %s\n", n)
	}
	if err := cfg.Unusable(); err != nil {
		// Those servers fail below; the others are checked all the same.
		fmt.Fprintf(env.stdout, "entries that cannot be used (their servers fail, the others serve):\n%v\n", err)
	}
	fmt.Fprintf(env.stdout, "trunk.maxMessageBytes: %d (the largest message sent to the host)\n", cfg.Trunk.MaxMessageBytes)
	var runnerErr error
	if cfg.Trunk.CodeMode.Enabled {
		// Code mode's programs run in the runner: without it every
		// run_code fails.
		var runner string
		if runner, runnerErr = child.Find(); runnerErr != nil {
			fmt.Fprintf(env.stdout, "trunk.codeMode: %v\n", runnerErr)
		} else {
			fmt.Fprintf(env.stdout, "trunk.codeMode: programs run in %s\n", runner)
		}
	}

	start := time.Now()
	var (
		mu       sync.Mutex
		printed  = map[string]upstream.State{}
		host     *upstream.Fleet
		finished bool // the table is being printed: no more progress lines
	)
	// Which servers are still starting, on stderr: the lines below say
	// what each one became.
	starting := env.startProgress(func() *upstream.Fleet {
		mu.Lock()
		defer mu.Unlock()
		return host
	})
	progress := func(server string) {
		mu.Lock()
		defer mu.Unlock()
		if host == nil || finished {
			return
		}
		c, ok := host.Client(server)
		if !ok {
			return
		}
		state, err := c.State()
		if printed[server] == state {
			return
		}
		printed[server] = state
		line := fmt.Sprintf("%7s  %-20s %s", time.Since(start).Round(time.Millisecond), server, state)
		if p := c.Status().Protocol; state == upstream.StateReady && p != "" {
			line += " (MCP " + p + ")" // which revision auto mode settled on
		}
		if st := c.Status(); state == upstream.StateSleeping && !st.CachedAt.IsZero() {
			line += " (lazy: listed from its catalog cache of " + textview.Ago(st.CachedAt) + ")"
		}
		if err != nil {
			line += ": " + textview.ErrorLine(err.Error())
		}
		starting.PrintAbove(env.stdout, line)
	}
	// A server with per-user credentials is listed as serve lists it: in
	// exchange mode with the trunk's own client token, in oauth mode with
	// the trunk's own sign-in (mcptrunk auth).
	signIns := signin.New(signin.Options{Logger: logger})
	signIns.Configure(cfg)
	creds := usercreds.New(usercreds.Options{Logger: logger, OAuth: signIns})
	creds.Configure(cfg.Servers)
	mu.Lock()
	host = upstream.NewFleet(&upstream.Options{
		Logger: logger, Concurrency: cfg.Trunk.Concurrency, Version: version(),
		Events: upstream.Events{Changed: progress}, RefreshCache: cc.refresh, Authorization: creds.Catalog,
	})
	mu.Unlock()
	defer host.Close(context.WithoutCancel(ctx))
	startErr := host.StartAll(ctx, cfg.Servers)
	starting.Stop()
	mu.Lock()
	finished = true
	mu.Unlock()

	fmt.Fprintln(env.stdout)
	var statuses []upstream.Status
	for _, c := range host.Clients() {
		statuses = append(statuses, c.Status())
	}
	textview.StatusTable(env.stdout, statuses)
	fmt.Fprintln(env.stdout)
	textview.Credentials(env.stdout, cfg.Servers)
	fmt.Fprintln(env.stdout)
	textview.Protection(env.stdout, statuses)
	if len(cfg.Trunk.Limits) > 0 {
		where := "counted in this process's memory"
		if cfg.Trunk.State.Redis() {
			where = "counted in Redis at " + cfg.Trunk.State.Where() + " for every replica that shares it"
		}
		fmt.Fprintf(env.stdout, "limits (trunk.limits, %s):\n", where)
		for _, line := range limits.Lines(cfg.Trunk.Limits) {
			fmt.Fprintln(env.stdout, line)
		}
		fmt.Fprintln(env.stdout)
	}
	storeUsable := true
	if cfg.Trunk.State.Configured {
		var line string
		line, storeUsable = stateReport(ctx, cfg.Trunk.State, logger)
		fmt.Fprintln(env.stdout, line)
		fmt.Fprintln(env.stdout)
	}
	for _, line := range catalog.PinLines(cfg.Trunk, catalog.ServersOf(host.Clients()), logger) {
		fmt.Fprintln(env.stdout, line)
	}
	for _, line := range trunktools.ConflictLines(cfg.Trunk, host.Clients()) {
		fmt.Fprintln(env.stdout, line)
	}
	servers := catalog.ServersOf(host.Clients())
	for _, line := range slices.Concat(catalog.OverrideLines(catalog.PolicyOf(cfg.Trunk), servers), catalog.ProfileOverrideLines(catalog.PolicyOf(cfg.Trunk), servers, cfg.Trunk.ProfileOverrides)) {
		fmt.Fprintln(env.stdout, line)
	}
	for _, line := range textview.AccessLines(cfg.Trunk, cmp.Or(cfg.Trunk.HTTP.Path, httpserve.DefaultPath)) {
		fmt.Fprintln(env.stdout, line)
	}
	if startErr != nil || len(host.Failures()) > 0 {
		fmt.Fprintf(env.stdout, "\n%d of %s failed\n", len(host.Failures()), plural(len(cfg.Servers), "server", "servers"))
		return exitError(1)
	}
	if runnerErr != nil {
		fmt.Fprintf(env.stdout, "\ncode mode cannot run programs: %s is missing (see above)\n", child.RunnerName)
		return exitError(1)
	}
	if !storeUsable {
		fmt.Fprintln(env.stdout, "\nthe state store (trunk.state) cannot be used now (see above): sign-ins and counted requests would fail")
		return exitError(1)
	}
	if cc.strict && len(cfg.Warnings) > 0 {
		fmt.Fprintf(env.stdout, "\n%s, which --strict fails on (see above)\n", wording.Count(len(cfg.Warnings), "config warning", "config warnings"))
		return exitError(1)
	}
	return nil
}
