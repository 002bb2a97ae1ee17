package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/cmd/mcptrunk-bench/refhop"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// httpWorkload: a go-sdk client calls go-sdk's conformance server over
// streamable HTTP (2025-11-25 sessions) three ways: directly, through a bare
// httputil.ReverseProxy, and through `mcptrunk serve --http` with the server
// as a remote ("type": "http") upstream. Sequential calls, 16 and 64 in
// flight, rounds rotating which goes first; the CPU per call of the reverse
// proxy's process and the trunk's.
func (b *bench) httpWorkload(ctx context.Context) error {
	b.progress("http: host -> HTTP -> conformance server, directly, through a reverse proxy and through mcptrunk (%d rounds)", b.cfg.rounds)
	sides, _, stop, err := b.httpHops(ctx)
	if err != nil {
		return err
	}
	defer stop()
	s, err := b.measureHTTP(ctx, sides)
	if err != nil {
		return err
	}
	d, r, t := s["direct"], s["relay"], s["trunk"]
	dp, rp, tp := percentile(d.lat, 50), percentile(r.lat, 50), percentile(t.lat, 50)
	b.add(row{workload: "HTTP -> HTTP: sequential call, p50 latency", direct: fmtDur(dp), trunk: fmtDur(tp), ratio: ratio(tp, dp),
		note: "go-sdk client, go-sdk conformance server (2025-11-25 sessions), test_simple_text; httputil.ReverseProxy " + fmtDur(rp) + ", the trunk " + fmtDelta(tp-rp) + " over it"})
	ds, rs, ts := median(d.seq), median(r.seq), median(t.seq)
	b.add(row{workload: "HTTP -> HTTP: sequential call, throughput", direct: fmtRate(ds), trunk: fmtRate(ts), ratio: ratio(ts, ds)})
	b.add(row{workload: "vs httputil.ReverseProxy: HTTP -> HTTP sequential throughput, proxy in the direct column", direct: fmtRate(rs), trunk: fmtRate(ts), ratio: ratio(ts, rs),
		target: ">= 1.0x", met: yesNo(ts >= rs)})
	df, rf, tf := median(d.fly), median(r.fly), median(t.fly)
	b.add(row{workload: "HTTP -> HTTP: 16 calls in flight, throughput", direct: fmtRate(df), trunk: fmtRate(tf), ratio: ratio(tf, df)})
	b.add(row{workload: "vs httputil.ReverseProxy: HTTP -> HTTP 16 in flight, proxy in the direct column", direct: fmtRate(rf), trunk: fmtRate(tf), ratio: ratio(tf, rf),
		target: ">= 1.0x", met: yesNo(tf >= rf)})
	r64, t64 := median(r.fly64), median(t.fly64)
	b.add(row{workload: "vs httputil.ReverseProxy: HTTP -> HTTP 64 in flight, proxy in the direct column", direct: fmtRate(r64), trunk: fmtRate(t64), ratio: ratio(t64, r64)})
	b.add(row{workload: "vs httputil.ReverseProxy: HTTP -> HTTP sequential p99, proxy in the direct column", direct: fmtDur(percentile(r.lat, 99)), trunk: fmtDur(percentile(t.lat, 99)), ratio: ratio(percentile(t.lat, 99), percentile(r.lat, 99))})
	b.add(row{workload: "vs httputil.ReverseProxy: CPU per call, proxy in the direct column", direct: fmtDur(r.cpu), trunk: fmtDur(t.cpu), ratio: ratio(t.cpu, r.cpu),
		note: "user+system time of each process from /proc/<pid>/stat over every measured call (10 ms ticks), sequential and in flight; the conformance server behind both not counted"})
	return nil
}

// httpHops starts what the http and peers workloads share: the conformance
// server (its URL is returned), a reverse proxy and `mcptrunk serve --http`
// in front of it, and a client session to each: sides direct, relay (the
// reverse proxy takes pair's relay slot: it is these workloads' reference)
// and trunk. stop ends them all.
func (b *bench) httpHops(ctx context.Context) (sides []*endpoint, upstream string, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	bin, err := testkit.ConformanceServer(b.l.dir)
	if err != nil {
		return nil, "", nil, err
	}
	srv, err := testkit.StartConformanceHTTP(ctx, bin, nil, "-stateless=false")
	if err != nil {
		return nil, "", nil, err
	}
	stops = append(stops, srv.Stop)
	proxyURL, proxyPID, stopProxy, err := refhop.StartReverseProxy(ctx, srv.URL)
	if err != nil {
		return nil, "", nil, err
	}
	stops = append(stops, stopProxy)
	cfg := filepath.Join(b.l.dir, "http-upstream.json")
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"conf": map[string]any{"type": "http", "url": srv.URL}}})
	if err := os.WriteFile(cfg, doc, 0o644); err != nil {
		return nil, "", nil, err
	}
	trunk, err := startHTTPTrunk(ctx, b.l.trunkBin, cfg, filepath.Join(b.l.dir, "http-cache"))
	if err != nil {
		return nil, "", nil, err
	}
	stops = append(stops, func() { _ = trunk.stop() })
	for _, s := range []struct {
		side, url, tool string
		pid             int
	}{
		{"direct", srv.URL, "test_simple_text", 0}, {"relay", proxyURL, "test_simple_text", proxyPID}, {"trunk", trunk.url, "mcp__conf__test_simple_text", trunk.cmd.Process.Pid},
	} {
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, protocol)
		if err != nil {
			return nil, "", nil, fmt.Errorf("connecting %s: %w", s.side, err)
		}
		stops = append(stops, func() { _ = cs.Close() })
		sides = append(sides, &endpoint{side: s.side, cs: cs, pid: s.pid, echo: s.tool, fixed: true})
	}
	return sides, srv.URL, stop, nil
}

// httpSamples is what measureHTTP measured on one side: every sequential
// call's latency (sorted), each round's calls per second, sequential and
// with 16 and 64 in flight, and, for a side whose process is known (pid),
// its CPU time per call over the rounds.
type httpSamples struct {
	lat             []time.Duration
	seq, fly, fly64 []float64
	cpu             time.Duration
}

// measureHTTP warms each side up, then runs the rounds, rotating which side
// goes first.
func (b *bench) measureHTTP(ctx context.Context, sides []*endpoint) (map[string]*httpSamples, error) {
	out := map[string]*httpSamples{}
	for _, e := range sides {
		out[e.side] = &httpSamples{}
		if _, _, err := sequential(ctx, e, b.cfg.warmup); err != nil {
			return nil, err
		}
	}
	cpu0 := cpuOf(sides)
	err := rotate(b.cfg.rounds, sides, func(_ int, e *endpoint) error {
		s := out[e.side]
		l, elapsed, err := sequential(ctx, e, b.cfg.calls/2)
		if err != nil {
			return err
		}
		s.lat = append(s.lat, l...)
		s.seq = append(s.seq, float64(len(l))/elapsed.Seconds())
		rate, err := inFlight(ctx, e, 16, b.cfg.flyCalls/2)
		if err != nil {
			return err
		}
		s.fly = append(s.fly, rate)
		if rate, err = inFlight(ctx, e, 64, b.cfg.flyCalls/2); err != nil {
			return err
		}
		s.fly64 = append(s.fly64, rate)
		return nil
	})
	calls := time.Duration(b.cfg.rounds * (b.cfg.calls/2 + b.cfg.flyCalls))
	for side, c := range cpuOf(sides) {
		out[side].cpu = (c - cpu0[side]) / calls
	}
	for _, s := range out {
		slices.Sort(s.lat)
	}
	return out, err
}

// cpuOf reads the CPU time used so far by each side's process, of those
// whose pid is known and readable (/proc: Linux).
func cpuOf(sides []*endpoint) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, e := range sides {
		if e.pid == 0 {
			continue
		}
		if c, err := procCPU(e.pid); err == nil {
			out[e.side] = c
		}
	}
	return out
}
