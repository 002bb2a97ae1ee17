// Command mcptrunk-bench measures what mcptrunk costs: the same workload is
// sent straight to an upstream and through the trunk, in one run, and the
// two are compared (issue #7).
//
// The upstream is mcptrunk-notes over stdio; the client is the official Go
// SDK (mcp.NewClient with mcp.CommandTransport) over stdio, connected either
// to the notes binary itself ("direct") or to `mcptrunk serve --config <a
// config listing notes>` ("trunk"), calling echo or mcp__notes__echo. Direct
// and trunk rounds alternate, because a small shared machine drifts.
//
// Usage:
//
//	mcptrunk-bench [-trunk bin/mcptrunk] [-notes bin/mcptrunk-notes] [-quick] [-only LIST] [-rounds N] [-calls N] ...
//
// It prints a Markdown table: workload | direct | trunk | ratio | target | met?
//
// For profiling, -profile PREFIX replaces bin/mcptrunk with this binary
// serving the trunk in its own process (proxy.New(...).Serve on its stdio,
// as `mcptrunk serve` does), which writes PREFIX.cpu.pprof and
// PREFIX.allocs.pprof when it exits; the product itself has no such switch.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		if run, ok := refHops[os.Args[1]]; ok {
			if err := run(os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "mcptrunk-bench %s: %v\n", os.Args[1], err)
				os.Exit(1)
			}
			return
		}
	}
	if len(os.Args) > 1 && os.Args[1] == serveTrunkCommand {
		if err := serveTrunk(os.Args[2:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "mcptrunk-bench serve-trunk:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcptrunk-bench:", err)
		os.Exit(1)
	}
}

// settings is what the flags set.
type settings struct {
	trunkBin, notesBin, chaosBin          string
	rounds, calls, flyCalls, warmup       int
	blobRounds, blobCalls1M, blobCalls20M int
	listCalls, startupRounds              int
	growthWarmup, growthBase, growthCalls int
	holRounds                             int
	holTime                               time.Duration
	idleWait                              time.Duration
	lazyRounds, sharedRounds              int
	npmModules                            string
	npmPeers, peersBin                    string
	only                                  map[string]bool
	profile                               string
	trunkArgs                             []string
	soakTime                              time.Duration
	soakFlood, soakFloodBytes             int
	capacityTime                          time.Duration
	capacitySessions                      int
	redisURL                              string
}

var workloads = []string{"footprint", "calls", "http", "blob", "catalog", "startup", "growth", "hol", "lazy", "shared", "soak", "peers", "capacity"}

func parseFlags(args []string, stderr io.Writer) (*settings, error) {
	fs := flag.NewFlagSet("mcptrunk-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &settings{}
	fs.StringVar(&c.trunkBin, "trunk", "bin/mcptrunk", "the mcptrunk binary")
	fs.StringVar(&c.notesBin, "notes", "bin/mcptrunk-notes", "the mcptrunk-notes binary")
	fs.StringVar(&c.chaosBin, "chaos", "bin/mcptrunk-chaos", "the mcptrunk-chaos binary (the soak's flooding server)")
	soakOnly := fs.Bool("soak", false, "run only the soak workload (as -only soak)")
	fs.DurationVar(&c.soakTime, "soak-time", 30*time.Second, "how long the soak's crowd and flood last")
	fs.IntVar(&c.soakFlood, "soak-flood", 48, "log messages the soak's flooding server sends, spread over the first half of the soak")
	fs.IntVar(&c.soakFloodBytes, "soak-flood-bytes", 1<<20, "each flood log message's size")
	fs.DurationVar(&c.capacityTime, "capacity-time", 5*time.Second, "how long the capacity workload opens sessions, and makes calls in flight per setting")
	fs.IntVar(&c.capacitySessions, "capacity-sessions", 1000, "idle sessions the capacity workload opens to measure the memory of one")
	fs.StringVar(&c.redisURL, "redis", "", "a Redis the capacity workload may use (it counts the scripts run there): redis://HOST:PORT/DB")
	quick := fs.Bool("quick", false, "a short run (about 30 s on 2 cores): fewer rounds and calls; flags given explicitly still win")
	fs.IntVar(&c.rounds, "rounds", 5, "interleaved direct/trunk rounds of the call and list workloads")
	fs.IntVar(&c.calls, "calls", 2000, "sequential calls per round and side")
	fs.IntVar(&c.flyCalls, "inflight-calls", 4000, "calls per round and side with 16 and with 64 in flight")
	fs.IntVar(&c.warmup, "warmup", 500, "calls per side before measuring")
	fs.IntVar(&c.blobRounds, "blob-rounds", 3, "interleaved rounds of the large-result workloads")
	fs.IntVar(&c.blobCalls1M, "blob-calls", 10, "1 MB calls per round and side")
	fs.IntVar(&c.blobCalls20M, "big-calls", 2, "20 MB calls per round and side")
	fs.IntVar(&c.listCalls, "list-calls", 20, "tools/list calls (1,000 tools) per round and side")
	fs.IntVar(&c.startupRounds, "startup-rounds", 5, "rounds of the startup workload (each starts 1 + 20 servers per setting)")
	fs.IntVar(&c.growthWarmup, "growth-warmup", 10000, "calls before the growth readings start")
	fs.IntVar(&c.growthBase, "growth-base", 1000, "calls before the first growth reading")
	fs.IntVar(&c.growthCalls, "growth-calls", 100000, "calls before the second growth reading")
	fs.IntVar(&c.holRounds, "hol-rounds", 2, "rounds of the head-of-line workload, each one phase with and one without 9 MiB results per side")
	fs.DurationVar(&c.idleWait, "idle-wait", 130*time.Second, "how long an idle trunk runs before its RSS is read: past the Go runtime's collection every 2 minutes, whose walk touches the binary's pages again")
	fs.DurationVar(&c.holTime, "hol-time", 1500*time.Millisecond, "how long each phase of the head-of-line workload makes small calls")
	fs.IntVar(&c.lazyRounds, "lazy-rounds", 3, "rounds of the lazy workload (each starts the trunk eager and lazy in front of 20 npm servers)")
	fs.IntVar(&c.sharedRounds, "shared-rounds", 2, "rounds of the shared workload (each starts 5 hosts' trunks with 10 npm servers each, and one serve --http trunk with 10)")
	fs.StringVar(&c.npmModules, "npm", "testdata/npm/node_modules", "where `make npm` installed the npm servers the lazy and shared workloads run")
	fs.StringVar(&c.npmPeers, "npm-peers", "testdata/npm-peers/node_modules", "where `make bench-peers` installed the npm peer proxies the peers workload runs")
	fs.StringVar(&c.peersBin, "peers-bin", "", "where `go install` put the Go peer proxies (GOBIN) the peers workload runs; empty: PATH")
	only := fs.String("only", "", "comma-separated workloads to run, of: "+strings.Join(workloads, ", "))
	fs.StringVar(&protocol.ProtocolVersion, "revision", protocol.ProtocolVersion, "the MCP revision both sides ask for: 2025-11-25, or 2026-07-28 (per-request _meta, resultType; the trunk then speaks it to mcptrunk-notes too)")
	fs.StringVar(&c.profile, "profile", "", "run each trunk as this binary's serve-trunk, writing `prefix`[.N].cpu.pprof and .allocs.pprof")
	trunkArgs := fs.String("trunk-args", "", "more arguments for `mcptrunk serve`, split at spaces (say \"--metrics 127.0.0.1:0\", to measure what metrics cost)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.trunkArgs = strings.Fields(*trunkArgs)
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]string{
			"rounds": "3", "calls": "500", "inflight-calls": "1500", "warmup": "200",
			"blob-rounds": "1", "blob-calls": "5", "big-calls": "1", "list-calls": "5",
			"startup-rounds": "3", "growth-calls": "20000", "growth-warmup": "5000",
			"hol-rounds": "1", "hol-time": "1s", "idle-wait": "3s", "lazy-rounds": "1", "shared-rounds": "1", "soak-time": "15s",
		} {
			if !set[name] {
				_ = fs.Set(name, v)
			}
		}
	}
	for _, n := range []int{c.rounds, c.calls, c.flyCalls, c.blobRounds, c.blobCalls1M, c.blobCalls20M, c.listCalls, c.startupRounds, c.growthBase, c.holRounds, c.lazyRounds, c.sharedRounds} {
		if n < 1 {
			return nil, errors.New("counts must be >= 1")
		}
	}
	if c.idleWait < 3*time.Second {
		return nil, errors.New("-idle-wait must be at least 3s: the trunk releases its start-up's memory 2 s after its servers settle")
	}
	if c.holTime <= 0 {
		return nil, errors.New("-hol-time must be positive")
	}
	if c.growthCalls <= c.growthBase || c.growthWarmup <= c.growthBase {
		return nil, errors.New("-growth-calls and -growth-warmup must be larger than -growth-base")
	}
	if c.capacityTime <= 0 || c.capacitySessions < 1 {
		return nil, errors.New("-capacity-time and -capacity-sessions must be positive")
	}
	if c.soakTime <= 0 || c.soakFlood < 1 || c.soakFloodBytes < 1 {
		return nil, errors.New("-soak-time, -soak-flood and -soak-flood-bytes must be positive")
	}
	if abs, err := filepath.Abs(c.chaosBin); err == nil {
		c.chaosBin = abs
	}
	c.only = map[string]bool{}
	if *soakOnly {
		c.only["soak"] = true
	}
	for _, w := range strings.Split(*only, ",") {
		if w = strings.TrimSpace(w); w == "" {
			continue
		}
		if !slices.Contains(workloads, w) {
			return nil, fmt.Errorf("-only: unknown workload %q (have %s)", w, strings.Join(workloads, ", "))
		}
		c.only[w] = true
	}
	return c, nil
}

// bench runs the workloads and collects their rows.
type bench struct {
	cfg    *settings
	l      *launcher
	rows   []row
	tables []string // printed after the rows' table: the peers workload's
	stderr io.Writer
	began  time.Time
}

func (b *bench) add(r row) { b.rows = append(b.rows, r) }

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.stderr, "[%5.1fs] "+format+"\n", append([]any{time.Since(b.began).Seconds()}, args...)...)
}

// wants says whether workload w runs: every one but peers (which needs
// installs of its own) and capacity (redis-server) when -only is not given.
func (b *bench) wants(w string) bool {
	return b.cfg.only[w] || len(b.cfg.only) == 0 && w != "peers" && w != "capacity"
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	l, err := newLauncher(cfg.trunkBin, cfg.notesBin, cfg.profile)
	if err != nil {
		return err
	}
	l.trunkArgs = cfg.trunkArgs
	defer l.cleanup()
	b := &bench{cfg: cfg, l: l, stderr: stderr, began: time.Now()}
	loadBefore := loadAverage()

	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"footprint", b.footprintWorkload},
		{"calls", b.callsWorkload},
		{"http", b.httpWorkload},
		{"blob", func(ctx context.Context) error {
			if err := b.blobWorkload(ctx, 1<<20, cfg.blobCalls1M); err != nil {
				return err
			}
			return b.blobWorkload(ctx, 20<<20, cfg.blobCalls20M)
		}},
		{"catalog", b.catalogWorkload},
		{"startup", func(ctx context.Context) error {
			if err := b.startupWorkload(ctx, 20); err != nil {
				return err
			}
			return b.startupWorkload(ctx, 0)
		}},
		{"growth", b.growthWorkload},
		{"hol", b.holWorkload},
		{"lazy", b.lazyWorkload},
		{"shared", b.sharedWorkload},
		{"soak", b.soakWorkload},
		{"peers", b.peersWorkload},
		{"capacity", b.capacityWorkload},
	}
	for _, s := range steps {
		if !b.wants(s.name) {
			continue
		}
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	b.progress("done")
	printTable(stdout, b.rows, machine(), loadBefore+" at the start, "+loadAverage()+" at the end", time.Since(b.began), strings.Join(args, " "))
	for _, t := range b.tables {
		fmt.Fprint(stdout, "\n"+t)
	}
	return nil
}
