package main

import (
	"context"
	"strings"

	"github.com/mcptrunk/mcptrunk/cmd/mcptrunk-bench/peers"
)

// peersWorkload: the http workload's hops and, measured in the same rounds,
// every peer aggregating proxy installed here (package peers) in front of
// the same conformance server. It prints a table of its own.
func (b *bench) peersWorkload(ctx context.Context) error {
	b.progress("peers: the http workload's hops and peer proxies, one conformance server (%d rounds)", b.cfg.rounds)
	sides, upstream, stop, err := b.httpHops(ctx)
	if err != nil {
		return err
	}
	defer stop()
	env := peers.Env{Dir: b.l.dir, Upstream: upstream, NPM: b.cfg.npmPeers, Bin: b.cfg.peersBin}
	running, skipped := peers.StartAll(ctx, env, func(r *peers.Running) error {
		cs, err := newClient().Connect(ctx, r.Transport(), protocol)
		if err == nil {
			sides = append(sides, &endpoint{side: r.Name, cs: cs, echo: r.Tool, fixed: true, close: cs.Close})
		}
		return err
	})
	for _, r := range running {
		defer r.Stop()
	}
	for _, s := range skipped {
		b.progress("peers: %s", s)
	}
	for _, e := range sides[3:] {
		defer e.Close()
	}
	samples, err := b.measureHTTP(ctx, sides)
	if err != nil {
		return err
	}
	names := map[string]string{"direct": "direct", "relay": "httputil.ReverseProxy", "trunk": "mcptrunk serve --http"}
	notes := map[string]string{"direct": "go-sdk conformance server, streamable HTTP, 2025-11-25 sessions; the go-sdk client on every row"}
	for _, r := range running {
		names[r.Name], notes[r.Name] = r.Name, r.Note
	}
	results := make([]peers.Result, len(sides))
	for i, e := range sides {
		s := samples[e.side]
		results[i] = peers.Result{Name: names[e.side], Note: notes[e.side], Seq: median(s.seq), Fly: median(s.fly), P50: percentile(s.lat, 50), P99: percentile(s.lat, 99)}
	}
	var out strings.Builder
	peers.Table(&out, results, skipped)
	b.tables = append(b.tables, out.String())
	return nil
}
