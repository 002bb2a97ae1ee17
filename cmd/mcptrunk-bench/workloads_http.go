package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
// as a remote ("type": "http") upstream. Sequential calls and 16 in flight,
// rounds rotating which goes first.
func (b *bench) httpWorkload(ctx context.Context) error {
	b.progress("http: host -> HTTP -> conformance server, directly, through a reverse proxy and through mcptrunk (%d rounds)", b.cfg.rounds)
	bin, err := testkit.ConformanceServer(b.l.dir)
	if err != nil {
		return err
	}
	srv, err := testkit.StartConformanceHTTP(ctx, bin, nil, "-stateless=false")
	if err != nil {
		return err
	}
	defer srv.Stop()
	srvURL := srv.URL
	proxyURL, stopProxy, err := startReverseProxy(ctx, srvURL)
	if err != nil {
		return err
	}
	defer stopProxy()
	cfg := filepath.Join(b.l.dir, "http-upstream.json")
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"conf": map[string]any{"type": "http", "url": srvURL}}})
	if err := os.WriteFile(cfg, doc, 0o644); err != nil {
		return err
	}
	trunk, err := startHTTPTrunk(ctx, b.l.trunkBin, cfg, filepath.Join(b.l.dir, "http-cache"))
	if err != nil {
		return err
	}
	defer func() { _ = trunk.stop() }()

	var sides []*endpoint
	for _, s := range []struct{ side, url, tool string }{
		// The reverse proxy takes pair's relay slot: it is this workload's reference.
		{"direct", srvURL, "test_simple_text"}, {"relay", proxyURL, "test_simple_text"}, {"trunk", trunk.url, "mcp__conf__test_simple_text"},
	} {
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, protocol)
		if err != nil {
			return fmt.Errorf("http: connecting %s: %w", s.side, err)
		}
		defer cs.Close()
		sides = append(sides, &endpoint{side: s.side, cs: cs, echo: s.tool, fixed: true})
	}
	for _, e := range sides {
		if _, _, err := sequential(ctx, e, b.cfg.warmup); err != nil {
			return err
		}
	}
	var (
		lat  pair[time.Duration]
		seqR pair[float64]
		flyR pair[float64]
	)
	err = rotate(b.cfg.rounds, sides, func(_ int, e *endpoint) error {
		l, elapsed, err := sequential(ctx, e, b.cfg.calls/2)
		if err != nil {
			return err
		}
		lat.add(e.side, l...)
		seqR.add(e.side, float64(len(l))/elapsed.Seconds())
		rate, err := inFlight(ctx, e, 16, b.cfg.flyCalls/2)
		if err != nil {
			return err
		}
		flyR.add(e.side, rate)
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range [][]time.Duration{lat.direct, lat.relay, lat.trunk} {
		slices.Sort(l)
	}
	dp, rp, tp := percentile(lat.direct, 50), percentile(lat.relay, 50), percentile(lat.trunk, 50)
	b.add(row{workload: "HTTP -> HTTP: sequential call, p50 latency", direct: fmtDur(dp), trunk: fmtDur(tp), ratio: ratio(tp, dp),
		note: "go-sdk client, go-sdk conformance server (2025-11-25 sessions), test_simple_text; httputil.ReverseProxy " + fmtDur(rp) + ", the trunk " + fmtDelta(tp-rp) + " over it"})
	ds, rs, ts := median(seqR.direct), median(seqR.relay), median(seqR.trunk)
	b.add(row{workload: "HTTP -> HTTP: sequential call, throughput", direct: fmtRate(ds), trunk: fmtRate(ts), ratio: ratio(ts, ds)})
	b.add(row{workload: "vs httputil.ReverseProxy: HTTP -> HTTP sequential throughput, proxy in the direct column", direct: fmtRate(rs), trunk: fmtRate(ts), ratio: ratio(ts, rs),
		target: ">= 1.0x", met: yesNo(ts >= rs)})
	df, rf, tf := median(flyR.direct), median(flyR.relay), median(flyR.trunk)
	b.add(row{workload: "HTTP -> HTTP: 16 calls in flight, throughput", direct: fmtRate(df), trunk: fmtRate(tf), ratio: ratio(tf, df)})
	b.add(row{workload: "vs httputil.ReverseProxy: HTTP -> HTTP 16 in flight, proxy in the direct column", direct: fmtRate(rf), trunk: fmtRate(tf), ratio: ratio(tf, rf),
		target: ">= 1.0x", met: yesNo(tf >= rf)})
	return nil
}

// startReverseProxy runs this binary's reverse-proxy in front of target and
// returns the URL it serves.
func startReverseProxy(ctx context.Context, target string) (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, self, refhop.ReverseProxyCommand, target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	var line [256]byte
	n, err := out.Read(line[:])
	if err != nil || n == 0 {
		stop()
		return "", nil, fmt.Errorf("reverse-proxy printed no URL: %v", err)
	}
	return string(line[:n-1]), stop, nil
}
