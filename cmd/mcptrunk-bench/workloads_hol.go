package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// holBlobBytes is the large result of the head-of-line workload: 9 MiB,
// under the trunk's default trunk.maxMessageBytes (10,420,224) and the
// go-sdk client's 16 MB line limit, so neither side needs a setting.
const holBlobBytes = 9 << 20

// Bounds of one phase of the head-of-line workload. The phase normally
// ends when its time budget is spent and, with large calls running, once
// holMinLarge large results have arrived; these caps end it in any case.
const (
	holMaxSmall = 200_000 // small calls
	holMaxLarge = 1_000   // large calls
	holMinLarge = 2       // large results a loaded phase waits for, up to holMaxPhase budgets
	holMaxPhase = 10      // budgets
)

// holSlow is the latency over which a small call counts as held up.
const holSlow = 20 * time.Millisecond

// countOver counts the samples over d.
func countOver(samples []time.Duration, d time.Duration) int {
	n := 0
	for _, s := range samples {
		if s > d {
			n++
		}
	}
	return n
}

// holWorkload: head-of-line blocking. Small echo calls go to one upstream
// while, on the same client session, another goroutine calls blob for
// 9 MiB results from a different upstream, back to back; the latency of
// the small calls is compared with the same calls when no large call runs.
// Through the trunk both upstreams share the host's one stdio pipe: a small
// answer that is ready while a 9 MiB line is being written waits for it.
// The direct side is the same two calls to two notes servers over two
// client sessions of their own (nothing shared but the machine and this
// client process), which shows what the load itself costs.
func (b *bench) holWorkload(ctx context.Context) error {
	b.progress("hol: echo calls to one upstream while 9 MiB results come from another (%d rounds x %s)", b.cfg.holRounds, b.cfg.holTime)
	bigD, err := b.l.direct(ctx, false)
	if err != nil {
		return err
	}
	defer bigD.Close()
	smallD, err := b.l.direct(ctx, false)
	if err != nil {
		return err
	}
	defer smallD.Close()
	bigT, err := b.l.trunk(ctx, false, nil, server{name: "big"}, server{name: "small"})
	if err != nil {
		return err
	}
	defer bigT.Close()
	smallT := *bigT // the same session, the other upstream's echo
	smallT.echo = "mcp__small__echo"
	big := map[string]*endpoint{"direct": bigD, "trunk": bigT}

	for _, e := range []*endpoint{smallD, &smallT} {
		if _, _, err := sequential(ctx, e, b.cfg.warmup); err != nil {
			return err
		}
		if err := callBlob(ctx, big[e.side], holBlobBytes); err != nil {
			return err
		}
	}

	var idle, loaded pair[time.Duration]
	large := map[string]int{}
	err = interleave(b.cfg.holRounds, smallD, &smallT, func(r int, e *endpoint) error {
		for i := range 2 {
			if (i+r)%2 == 0 {
				lat, _, err := holPhase(ctx, e, nil, b.cfg.holTime)
				if err != nil {
					return err
				}
				idle.add(e.side, lat...)
				continue
			}
			lat, n, err := holPhase(ctx, e, big[e.side], b.cfg.holTime)
			if err != nil {
				return err
			}
			loaded.add(e.side, lat...)
			large[e.side] += n
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, s := range [][]time.Duration{idle.direct, idle.trunk, loaded.direct, loaded.trunk} {
		slices.Sort(s)
	}
	p := percentile
	const what = "head-of-line: echo to a second upstream"
	const during = ", while 9 MiB results stream from the first"
	b.add(row{workload: what + ", p50, no large call running",
		direct: fmtDur(p(idle.direct, 50)), trunk: fmtDur(p(idle.trunk, 50)), ratio: ratio(p(idle.trunk, 50), p(idle.direct, 50)),
		note: "sequential echo calls to one notes server while another goroutine calls blob (9,437,184 bytes) on another, back to back; " +
			"trunk: both servers behind one trunk, both calls on its one host session, so both answers share the pipe to the host; " +
			"direct: each server on a client session of its own. " +
			fmt.Sprintf("Each round %s without and %s with the large calls, order alternating", b.cfg.holTime, b.cfg.holTime)})
	b.add(row{workload: what + ", p99, no large call running",
		direct: fmtDur(p(idle.direct, 99)), trunk: fmtDur(p(idle.trunk, 99)), ratio: ratio(p(idle.trunk, 99), p(idle.direct, 99))})
	b.add(row{workload: what + ", p50" + during,
		direct: fmtDur(p(loaded.direct, 50)), trunk: fmtDur(p(loaded.trunk, 50)), ratio: ratio(p(loaded.trunk, 50), p(loaded.direct, 50))})
	b.add(row{workload: what + ", p99" + during,
		direct: fmtDur(p(loaded.direct, 99)), trunk: fmtDur(p(loaded.trunk, 99)), ratio: ratio(p(loaded.trunk, 99), p(loaded.direct, 99)),
		note: fmt.Sprintf("%d results of 9 MiB written to the client during the measurement through the trunk (%d direct), "+
			"while %s small calls ran (%s direct). Small calls over %s: %d through the trunk, %d direct; the slowest %s through the trunk, %s direct. "+
			"A sequential caller has one call outstanding, so each large write can hold up at most one small call: p99 shows it only when more than 1 in 100 are held up",
			large["trunk"], large["direct"], thousands(len(loaded.trunk)), thousands(len(loaded.direct)),
			fmtDur(holSlow), countOver(loaded.trunk, holSlow), countOver(loaded.direct, holSlow),
			fmtDur(slices.Max(loaded.trunk)), fmtDur(slices.Max(loaded.direct)))})
	return nil
}

// holPhase makes sequential echo calls on small for budget and returns
// their latencies. With big set, another goroutine calls big's blob tool
// for holBlobBytes back to back meanwhile, and the phase also waits until
// holMinLarge large results have arrived (for at most holMaxPhase budgets);
// the count returned is the large results that arrived while small calls
// ran. The large call in flight when the phase ends is waited for and not
// counted, so none is running when the next phase starts.
func holPhase(ctx context.Context, small, big *endpoint, budget time.Duration) ([]time.Duration, int, error) {
	var (
		stop  atomic.Bool
		done  atomic.Int64 // large results received
		wg    sync.WaitGroup
		bigEr error
	)
	if big != nil {
		wg.Go(func() {
			for i := 0; i < holMaxLarge && !stop.Load(); i++ {
				if err := callBlob(ctx, big, holBlobBytes); err != nil {
					bigEr = err
					return
				}
				done.Add(1)
			}
		})
	}
	var (
		lat   = make([]time.Duration, 0, 4096)
		err   error
		began = time.Now()
	)
	for range holMaxSmall {
		t0 := time.Now()
		if err = callEcho(ctx, small, smallText); err != nil {
			break
		}
		lat = append(lat, time.Since(t0))
		elapsed := time.Since(began)
		if elapsed >= budget && (big == nil || done.Load() >= holMinLarge) || elapsed >= holMaxPhase*budget {
			break
		}
	}
	large := int(done.Load())
	stop.Store(true)
	wg.Wait()
	if err := errors.Join(err, bigEr); err != nil {
		return nil, 0, err
	}
	if len(lat) == 0 {
		return nil, 0, fmt.Errorf("%s: no small call was made", small.side)
	}
	return lat, large, nil
}
