package textview

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcptrunk/mcptrunk/internal/config"
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
