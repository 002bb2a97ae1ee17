package peers

import (
	"fmt"
	"io"
	"time"
)

// Result is one hop's numbers: medians over rounds of the calls per second,
// sequential and with 16 in flight, and percentiles of every sequential
// call's latency.
type Result struct {
	Name, Note string
	Seq, Fly   float64
	P50, P99   time.Duration
}

// Table writes the side-by-side table. results[0] is the direct side and
// results[1] httputil.ReverseProxy: every hop's throughput is given over
// both, so that a peer is judged against the same two yardsticks as
// mcptrunk. skipped lists the peers that did not run, and why.
func Table(w io.Writer, results []Result, skipped []string) {
	fmt.Fprintln(w, "| hop | sequential | 16 in flight | p50 | p99 | seq / direct | seq / ReverseProxy | 16 / direct | 16 / ReverseProxy |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	var direct, rp Result
	if len(results) > 1 {
		direct, rp = results[0], results[1]
	}
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %.0f calls/s | %.0f calls/s | %s | %s | %s | %s | %s | %s |\n", r.Name, r.Seq, r.Fly,
			micros(r.P50), micros(r.P99), over(r.Seq, direct.Seq), over(r.Seq, rp.Seq), over(r.Fly, direct.Fly), over(r.Fly, rp.Fly))
	}
	fmt.Fprintln(w)
	for _, r := range results {
		if r.Note != "" {
			fmt.Fprintf(w, "- %s: %s\n", r.Name, r.Note)
		}
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "- not run: %s\n", s)
	}
}

func micros(d time.Duration) string { return fmt.Sprintf("%d µs", d.Microseconds()) }

// over is a rate over a reference rate, "-" without a reference.
func over(x, ref float64) string {
	if ref == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x/ref)
}
