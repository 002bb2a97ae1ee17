package textview

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Credentials says of each server whose credential its calls carry:
// shared (every caller acts as the entry's own env and headers) or
// per-user, and how (mcptrunk check). Nothing secret is printed.
func Credentials(w io.Writer, specs []config.Spec) {
	fmt.Fprintln(w, "credentials:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range specs {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.CredentialsSummary())
	}
	_ = tw.Flush()
}

// Protection prints each server's cap on calls in flight and circuit
// breaker, as upstream.Status.Protection words them, under a heading;
// nothing when no server has either.
func Protection(w io.Writer, statuses []upstream.Status) {
	var lines [][2]string
	for _, s := range statuses {
		if p := s.Protection(); p != "" {
			lines = append(lines, [2]string{s.Server, p})
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "protection:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "  %s\t%s\n", l[0], l[1])
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
}
