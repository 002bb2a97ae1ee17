package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// smallText is the echo payload of the call workloads.
const smallText = "the quick brown fox jumps over the lazy dog"

// callEcho calls the echo tool and checks the answer.
func callEcho(ctx context.Context, e *endpoint, text string) error {
	args := map[string]any{"text": text}
	if e.fixed {
		args = map[string]any{} // not null: a TypeScript SDK server refuses null arguments
	}
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: e.echo, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %s: %w", e.side, e.echo, err)
	}
	if e.fixed {
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("%s: %s answered %q", e.side, e.echo, resultText(res))
		}
		return nil
	}
	if got := resultText(res); got != text {
		return fmt.Errorf("%s: %s answered %q", e.side, e.echo, truncate(got, 80))
	}
	return nil
}

// callBlob calls the blob tool for n bytes and checks the answer's size.
func callBlob(ctx context.Context, e *endpoint, n int) error {
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: e.blob, Arguments: map[string]any{"bytes": n}})
	if err != nil {
		return fmt.Errorf("%s: %s(%d): %w", e.side, e.blob, n, err)
	}
	if got := resultText(res); len(got) != n {
		return fmt.Errorf("%s: %s(%d) answered %d bytes: %q", e.side, e.blob, n, len(got), truncate(got, 80))
	}
	return nil
}

func resultText(res *mcp.CallToolResult) string {
	if res.IsError || len(res.Content) != 1 {
		msg := fmt.Sprintf("isError=%v, %d contents", res.IsError, len(res.Content))
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				msg += ": " + t.Text
			}
		}
		return msg
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return fmt.Sprintf("a %T", res.Content[0])
	}
	return t.Text
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// sequential makes n calls one after the other and returns each one's
// latency and the time all took.
func sequential(ctx context.Context, e *endpoint, n int) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	began := time.Now()
	for i := range lat {
		t0 := time.Now()
		if err := callEcho(ctx, e, smallText); err != nil {
			return nil, 0, err
		}
		lat[i] = time.Since(t0)
	}
	return lat, time.Since(began), nil
}

// inFlight makes n calls with k of them in flight at any time (k workers
// taking calls from a shared count) and returns the calls per second.
func inFlight(ctx context.Context, e *endpoint, k, n int) (float64, error) {
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		failed atomic.Bool
	)
	began := time.Now()
	for range k {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && !failed.Load() {
				if err := callEcho(ctx, e, smallText); err != nil {
					failed.Store(true)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}

// pair is the same measurement on both sides (and, where a workload has
// one, through the byte relay).
type pair[T any] struct{ direct, trunk, relay []T }

func (p *pair[T]) add(side string, v ...T) {
	switch side {
	case "direct":
		p.direct = append(p.direct, v...)
	case "relay":
		p.relay = append(p.relay, v...)
	default:
		p.trunk = append(p.trunk, v...)
	}
}

// interleave runs f for both sides in each of rounds rounds, alternating
// which side goes first, so that drifts in machine load hit both equally.
func interleave(rounds int, d, t *endpoint, f func(round int, e *endpoint) error) error {
	return rotate(rounds, []*endpoint{d, t}, f)
}

// sidesOf is the order of the two sides in round r: each goes first in
// every other round, so that drifts in machine load hit both alike.
func sidesOf(r int) []string { return [][]string{{"direct", "trunk"}, {"trunk", "direct"}}[r%2] }

// timeEach times n calls of call on each side, interleaved over rounds.
func timeEach(rounds int, d, t *endpoint, n int, call func(*endpoint) error) (pair[time.Duration], error) {
	var times pair[time.Duration]
	err := interleave(rounds, d, t, func(_ int, e *endpoint) error {
		for range n {
			t0 := time.Now()
			if err := call(e); err != nil {
				return err
			}
			times.add(e.side, time.Since(t0))
		}
		return nil
	})
	return times, err
}

// rotate runs f for every side in each of rounds rounds, each round
// starting one side later, so that drifts in machine load hit all alike.
func rotate(rounds int, sides []*endpoint, f func(round int, e *endpoint) error) error {
	for r := range rounds {
		order := append(slices.Clone(sides[r%len(sides):]), sides[:r%len(sides)]...)
		for _, e := range order {
			if err := f(r, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- the workloads ----

// callsWorkload: small echo calls, sequential and with 16 and 64 in flight,
// against one notes server directly and through a trunk in front of it.
func (b *bench) callsWorkload(ctx context.Context) error {
	b.progress("calls: sequential, 16 and 64 in flight (%d rounds)", b.cfg.rounds)
	d, err := b.l.direct(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close()
	t, err := b.l.trunk(ctx, false, nil, server{name: "notes"})
	if err != nil {
		return err
	}
	defer t.Close()
	rl, err := b.l.relay(ctx)
	if err != nil {
		return err
	}
	defer rl.Close()
	sides := []*endpoint{d, t, rl}
	b.progress("protocol negotiated: direct %s, trunk %s", d.cs.InitializeResult().ProtocolVersion, t.cs.InitializeResult().ProtocolVersion)
	for _, e := range sides { // warm up all three
		if _, _, err := sequential(ctx, e, b.cfg.warmup); err != nil {
			return err
		}
		if _, err := inFlight(ctx, e, 64, b.cfg.warmup); err != nil {
			return err
		}
	}

	cpu0 := [3]time.Duration{}
	for i, e := range sides {
		if cpu0[i], err = procCPU(e.pid); err != nil {
			return err
		}
	}
	var (
		lat      pair[time.Duration]
		roundP50 pair[time.Duration]
		hops     []time.Duration // a bare stdio hop, once a round
		seqR     pair[float64]
		flyR     = map[int]*pair[float64]{16: {}, 64: {}}
		ks       = []int{16, 64}
		calls    = b.cfg.calls
	)
	err = rotate(b.cfg.rounds, sides, func(_ int, e *endpoint) error {
		l, elapsed, err := sequential(ctx, e, calls)
		if err != nil {
			return err
		}
		lat.add(e.side, l...)
		slices.Sort(l)
		roundP50.add(e.side, percentile(l, 50))
		if e.side == "trunk" {
			hop, err := hopRoundTrip(calls/2, 50*time.Microsecond)
			if err != nil {
				return fmt.Errorf("measuring a bare stdio hop: %w", err)
			}
			hops = append(hops, hop)
		}
		seqR.add(e.side, float64(calls)/elapsed.Seconds())
		for _, k := range ks {
			rate, err := inFlight(ctx, e, k, b.cfg.flyCalls)
			if err != nil {
				return err
			}
			flyR[k].add(e.side, rate)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var cpu [3]time.Duration
	for i, e := range sides {
		c, err := procCPU(e.pid)
		if err != nil {
			return err
		}
		cpu[i] = (c - cpu0[i]) / time.Duration(b.cfg.rounds*(calls+2*b.cfg.flyCalls))
	}
	slices.Sort(lat.direct)
	slices.Sort(lat.trunk)
	dp50, tp50 := percentile(lat.direct, 50), percentile(lat.trunk, 50)
	dp99, tp99 := percentile(lat.direct, 99), percentile(lat.trunk, 99)
	b.add(row{
		workload: "sequential echo, p50 latency",
		direct:   fmtDur(dp50), trunk: fmtDur(tp50), ratio: ratio(tp50, dp50),
		target: "<= 1.5x or <= +100 µs",
		met:    yesNo(float64(tp50) <= 1.5*float64(dp50) || tp50-dp50 <= 100*time.Microsecond),
		note:   fmtDelta(tp50-dp50) + " per call; p50 of each round, direct " + fmtDurs(roundP50.direct) + ", trunk " + fmtDurs(roundP50.trunk),
	})
	b.add(row{workload: "sequential echo, p99 latency", direct: fmtDur(dp99), trunk: fmtDur(tp99), ratio: ratio(tp99, dp99)})
	ds, ts := median(seqR.direct), median(seqR.trunk)
	b.add(row{workload: "sequential echo, throughput", direct: fmtRate(ds), trunk: fmtRate(ts), ratio: ratio(ts, ds)})
	for _, k := range ks {
		dr, tr := median(flyR[k].direct), median(flyR[k].trunk)
		r := row{workload: fmt.Sprintf("%d calls in flight, throughput", k), direct: fmtRate(dr), trunk: fmtRate(tr), ratio: ratio(tr, dr)}
		if k == 16 {
			r.target, r.met = ">= 0.7x", yesNo(tr >= 0.7*dr)
		}
		b.add(r)
	}
	slices.Sort(lat.relay)
	rp50, rp99 := percentile(lat.relay, 50), percentile(lat.relay, 99)
	rs := median(seqR.relay)
	b.add(row{workload: "vs a byte relay: sequential echo, p50 latency, relay in the direct column", direct: fmtDur(rp50), trunk: fmtDur(tp50), ratio: ratio(tp50, rp50),
		note: fmtDelta(tp50-rp50) + " per call over the thinnest stdio hop (a process that copies bytes both ways, nothing parsed); p99 relay " + fmtDur(rp99) + ", trunk " + fmtDur(tp99)})
	b.add(row{workload: "vs a byte relay: sequential echo, throughput, relay in the direct column", direct: fmtRate(rs), trunk: fmtRate(ts), ratio: ratio(ts, rs),
		target: ">= 0.95x", met: yesNo(ts >= 0.95*rs)})
	for _, k := range ks {
		rr, tr := median(flyR[k].relay), median(flyR[k].trunk)
		r := row{workload: fmt.Sprintf("vs a byte relay: %d calls in flight, throughput, relay in the direct column", k), direct: fmtRate(rr), trunk: fmtRate(tr), ratio: ratio(tr, rr)}
		if k == 16 {
			r.target, r.met = ">= 0.95x", yesNo(tr >= 0.95*rr)
		}
		b.add(r)
	}
	b.add(row{workload: "vs a byte relay: CPU per echo call, relay in the direct column", direct: fmtDur(cpu[2]), trunk: fmtDur(cpu[1]), ratio: ratio(cpu[1], cpu[2])})
	b.add(row{workload: "reference: one bare stdio hop (round trip through a Go process that only echoes), p50", trunk: fmtDur(median(hops)),
		note: "the least any process in the path adds: the trunk adds one such round trip to each call, on top of its own work; " +
			"measured once a round, the client busy 50 µs between round trips as between calls; p50 of each round " + fmtDurs(hops)})
	b.add(row{workload: "CPU per echo call: notes server (direct) vs mcptrunk process", direct: fmtDur(cpu[0]), trunk: fmtDur(cpu[1]), ratio: ratio(cpu[1], cpu[0]),
		note: "user+system time from /proc/<pid>/stat over every measured call; the trunk column is the hop alone (its notes child is not counted)"})
	return nil
}

// blobWorkload: one text result of size bytes; time per call on both sides
// and the trunk's peak RSS. Each size gets fresh processes, so the peak
// belongs to it.
func (b *bench) blobWorkload(ctx context.Context, size, calls int) error {
	label := fmt.Sprintf("%d MB", size>>20)
	b.progress("blob: %s results (%d rounds x %d calls)", label, b.cfg.blobRounds, calls)
	d, err := b.l.direct(ctx, true)
	if err != nil {
		return err
	}
	defer d.Close()
	// trunk.maxMessageBytes (default 10 MiB less 64 KiB, what the
	// TypeScript SDK's hosts read) would refuse the 20 MB result; this client
	// reads any size.
	t, err := b.l.trunk(ctx, true, trunkOptions{"maxMessageBytes": 64 << 20}, server{name: "notes"})
	if err != nil {
		return err
	}
	defer t.Close()
	for _, e := range []*endpoint{d, t} {
		if err := callEcho(ctx, e, smallText); err != nil {
			return err
		}
	}
	peakNote := ""
	if err := resetPeak(t.pid); err != nil {
		peakNote = "VmHWM could not be reset, so it is the peak since start: "
	}
	times, err := timeEach(b.cfg.blobRounds, d, t, calls, func(e *endpoint) error { return callBlob(ctx, e, size) })
	if err != nil {
		return err
	}
	dt, tt := median(times.direct), median(times.trunk)
	b.add(row{workload: label + " result, time per call", direct: fmtDur(dt), trunk: fmtDur(tt), ratio: ratio(tt, dt),
		note: fmtDelta(tt-dt) + " per call"})
	st, err := procStatus(t.pid, "VmHWM", "VmRSS")
	if err != nil {
		return err
	}
	dst, _ := procStatus(d.pid, "VmHWM")
	r := row{workload: label + " result, trunk peak RSS (VmHWM)", trunk: fmtKB(st["VmHWM"]),
		note: peakNote + fmt.Sprintf("%.1fx the payload; notes' own peak %s", float64(st["VmHWM"]<<10)/float64(size), fmtKB(dst["VmHWM"]))}
	if size >= 20<<20 {
		r.target = "passes, < 4x payload"
		r.met = yesNo(st["VmHWM"]<<10 < int64(4*size))
	}
	b.add(r)
	return nil
}

// catalogWorkload: 20 notes servers with 50 tools each behind a trunk:
// the trunk's RSS once they idle, then tools/list of all 1,000 tools
// through it, against one notes server offering 1,000 tools itself.
func (b *bench) catalogWorkload(ctx context.Context) error {
	b.progress("catalog: 20 upstreams x 50 tools (%d rounds x %d lists)", b.cfg.rounds, b.cfg.listCalls)
	d, err := b.l.direct(ctx, false, "-tools", "994")
	if err != nil {
		return err
	}
	defer d.Close()
	t, err := b.l.trunk(ctx, false, nil, notesServers(20, "-tools", "44")...)
	if err != nil {
		return err
	}
	defer t.Close()

	count := func(e *endpoint) (int, int, error) {
		n, pages := 0, 0
		var cursor string
		for {
			res, err := e.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return 0, 0, fmt.Errorf("%s: tools/list: %w", e.side, err)
			}
			pages++
			for _, tool := range res.Tools {
				if e.side == "direct" || !strings.HasPrefix(tool.Name, "mcp__trunk__") {
					n++
				}
			}
			if cursor = res.NextCursor; cursor == "" {
				return n, pages, nil
			}
		}
	}
	var pages [2]int
	for i, e := range []*endpoint{d, t} {
		n, p, err := count(e)
		if err != nil {
			return err
		}
		if n != 1000 {
			return fmt.Errorf("%s lists %d tools, want 1,000", e.side, n)
		}
		pages[i] = p
	}

	// The 20 upstreams have started and been listed: let them idle, past
	// the release of the startup's memory 2 s after they settled
	// (mcptrunk's releaseAfterStartup), for -idle-wait.
	time.Sleep(b.cfg.idleWait)
	st, err := procStatus(t.pid, "VmRSS", "RssAnon", "RssFile")
	if err != nil {
		return err
	}
	b.add(row{workload: fmt.Sprintf("20 idle upstreams (1,000 tools), trunk RSS %s after listing", b.cfg.idleWait), trunk: fmtKB(st["VmRSS"]),
		target: "<= 20 MB", met: yesNo(st["VmRSS"] <= 20<<10),
		note: fmt.Sprintf("anonymous (heap, stacks) %s, file-backed (the binary's pages) %s", fmtKB(st["RssAnon"]), fmtKB(st["RssFile"]))})

	lat, err := timeEach(b.cfg.rounds, d, t, b.cfg.listCalls, func(e *endpoint) error { _, _, err := count(e); return err })
	if err != nil {
		return err
	}
	dl, tl := median(lat.direct), median(lat.trunk)
	b.add(row{workload: "tools/list, 1,000 tools (20 x 50 via trunk)", direct: fmtDur(dl), trunk: fmtDur(tl), ratio: ratio(tl, dl),
		note: fmt.Sprintf("pages: direct %d, trunk %d (page size 1,000 plus the trunk's 2 own tools)", pages[0], pages[1])})
	return nil
}
