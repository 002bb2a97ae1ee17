package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startupWorkload: time from spawning until the first tools/list has
// answered, for one notes server that takes 200 ms to initialise, and for a
// trunk in front of 20 of them. concurrency is trunk.concurrency (0: the
// default).
func (b *bench) startupWorkload(ctx context.Context, concurrency int) error {
	label := fmt.Sprintf("default trunk.concurrency (%d)", config.DefaultConcurrency)
	if concurrency > 0 {
		label = fmt.Sprintf("trunk.concurrency %d", concurrency)
	}
	b.progress("startup: 20 upstreams x 200 ms, %s (%d rounds)", label, b.cfg.startupRounds)
	const delay = "200ms"
	var (
		times   pair[time.Duration]
		selfCPU []time.Duration // the trunk's own
		twenty  []time.Duration // 20 servers started directly at once: the floor
	)
	for r := range b.cfg.startupRounds {
		if concurrency > 0 {
			d, err := b.startDirectly(ctx, 20, "-delay", delay)
			if err != nil {
				return err
			}
			twenty = append(twenty, d)
		}
		sides := sidesOf(r)
		for _, side := range sides {
			t0 := time.Now()
			var (
				e   *endpoint
				err error
			)
			if side == "direct" {
				e, err = b.l.direct(ctx, false, "-delay", delay)
			} else {
				var opts trunkOptions
				if concurrency > 0 {
					opts = trunkOptions{"concurrency": concurrency}
				}
				e, err = b.l.trunk(ctx, false, opts, notesServers(20, "-delay", delay)...)
			}
			if err != nil {
				return err
			}
			servers := map[string]bool{}
			res, err := e.cs.ListTools(ctx, nil)
			elapsed := time.Since(t0)
			if c, cerr := procCPU(e.pid); cerr == nil && side == "trunk" {
				selfCPU = append(selfCPU, c)
			}
			if err == nil {
				for _, tool := range res.Tools {
					if s, _, ok := strings.Cut(strings.TrimPrefix(tool.Name, "mcp__"), "__"); ok && s != "trunk" {
						servers[s] = true
					}
				}
			}
			cerr := e.Close()
			if err != nil {
				return fmt.Errorf("%s: first tools/list: %w", side, err)
			}
			if cerr != nil {
				return cerr
			}
			if side == "trunk" && len(servers) != 20 {
				return fmt.Errorf("trunk: the first tools/list had tools of %d servers, want 20", len(servers))
			}
			times.add(side, elapsed)
		}
	}
	dt, tt := median(times.direct), median(times.trunk)
	b.add(row{workload: "startup to first tools/list, 20 x 200 ms servers, " + label,
		direct: fmtDur(dt), trunk: fmtDur(tt), ratio: ratio(tt, dt),
		target: "< 1.5x one alone", met: yesNo(float64(tt) < 1.5*float64(dt)),
		note: fmt.Sprintf("mcptrunk's own CPU until the answer: %s (median, in 10 ms ticks)", fmtDur(median(selfCPU))) + floorNote(twenty)})
	return nil
}

func floorNote(twenty []time.Duration) string {
	if len(twenty) == 0 {
		return ""
	}
	return fmt.Sprintf(". Without a trunk, 20 such servers started at once by 20 clients all answer tools/list after %s (median): the floor for starting 20 processes here", fmtDur(median(twenty)))
}

// startDirectly starts n notes servers at once, each with its own go-sdk
// client, and returns the time until every one has answered tools/list.
func (b *bench) startDirectly(ctx context.Context, n int, args ...string) (time.Duration, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		eps  []*endpoint
	)
	t0 := time.Now()
	for range n {
		wg.Go(func() {
			e, err := b.l.direct(ctx, false, args...)
			if err == nil {
				mu.Lock()
				eps = append(eps, e)
				mu.Unlock()
				_, err = e.cs.ListTools(ctx, nil)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	for _, e := range eps {
		errs = append(errs, e.Close())
	}
	return elapsed, errors.Join(errs...)
}

// growthWorkload: the trunk's RSS (and threads) after 1,000 calls and after
// 100,000, with 16 in flight, and the same for goroutines with the trunk
// in-process, where runtime.NumGoroutine can count them.
func (b *bench) growthWorkload(ctx context.Context) error {
	base, total := b.cfg.growthBase, b.cfg.growthCalls
	b.progress("growth: %d calls vs %d after %d (subprocess: RSS; in-process: goroutines)", total, base, b.cfg.growthWarmup)

	if err := b.growthRSS(ctx, b.cfg.growthWarmup, base, total); err != nil {
		return err
	}

	// Goroutines: the same calls against a trunk served by this process.
	path, err := b.l.writeConfig([]server{{name: "notes"}}, nil)
	if err != nil {
		return err
	}
	p, r, w, err := startInProcess(path)
	if err != nil {
		return err
	}
	cs, err := newClient().Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, protocol)
	if err != nil {
		_ = w.Close()
		_ = p.wait()
		return err
	}
	e := &endpoint{side: "trunk", cs: cs, echo: "mcp__notes__echo"}
	if _, err := inFlight(ctx, e, 16, b.cfg.growthWarmup); err != nil {
		_ = cs.Close()
		_ = p.wait()
		return err
	}
	var gs [2]int
	for i, n := range []int{base, total - base} {
		if _, err := inFlight(ctx, e, 16, n); err != nil {
			_ = cs.Close()
			_ = p.wait()
			return err
		}
		gs[i] = settledGoroutines()
	}
	if err := errors.Join(ignoreExit(cs.Close()), p.wait()); err != nil {
		return err
	}
	b.add(row{workload: fmt.Sprintf("goroutines after %s calls vs after %s (in-process trunk + client, same warm-up)", thousands(total), thousands(base)),
		direct: "-", trunk: fmt.Sprintf("%d -> %d", gs[0], gs[1]), ratio: ratio(float64(gs[1]), float64(gs[0])),
		target: "no growth", met: yesNo(gs[1] <= gs[0])})
	return nil
}

// growthRSS reads the trunk's memory and threads after base calls and
// after total calls, 16 in flight, both counted after a warm-up of
// warm calls (reported too, as the cold reading).
func (b *bench) growthRSS(ctx context.Context, warm, base, total int) error {
	t, err := b.l.trunk(ctx, false, nil, server{name: "notes"})
	if err != nil {
		return err
	}
	defer t.Close()
	// cold: base calls after start; then the rest of the warm-up; then
	// the two readings.
	steps := []struct {
		calls int
		read  bool
	}{{base, true}, {warm - base, false}, {base, true}, {total - base, true}}
	var st []map[string]int64 // cold, after base, after total
	for _, step := range steps {
		if _, err := inFlight(ctx, t, 16, step.calls); err != nil {
			return err
		}
		if !step.read {
			continue
		}
		time.Sleep(500 * time.Millisecond)
		m, err := procStatus(t.pid, "VmRSS", "RssAnon", "RssFile", "Threads")
		if err != nil {
			return err
		}
		st = append(st, m)
	}
	rss0, rss1 := st[1]["VmRSS"], st[2]["VmRSS"]
	anon0, anon1 := st[1]["RssAnon"], st[2]["RssAnon"]
	b.add(row{workload: fmt.Sprintf("trunk RSS after %s calls vs after %s (after a %s-call warm-up)", thousands(total), thousands(base), thousands(warm)),
		trunk: fmtKB(rss0) + " -> " + fmtKB(rss1), ratio: ratio(float64(rss1), float64(rss0)),
		target: "no growth (< 2 MB)", met: yesNo(anon1-anon0 < 2<<10),
		note: fmt.Sprintf("judged on anonymous memory (heap, stacks): %s -> %s; file-backed (the binary's pages) %s -> %s; OS threads %d -> %d. "+
			"Cold, %s calls after start: %s (anonymous %s), the heap not yet at its working size",
			fmtKB(anon0), fmtKB(anon1), fmtKB(st[1]["RssFile"]), fmtKB(st[2]["RssFile"]), st[1]["Threads"], st[2]["Threads"],
			thousands(base), fmtKB(st[0]["VmRSS"]), fmtKB(st[0]["RssAnon"]))})
	return nil
}

// settledGoroutines counts goroutines once the calls are over: after the
// time a handler goroutine may wait for another request (jsonrpc's
// handlerIdle, 1 s) and then until the count stops falling.
func settledGoroutines() int {
	time.Sleep(1500 * time.Millisecond)
	n := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
