// Command prebuild builds the Ory Hydra the tests run (testkit/hydra)
// before they start, so that its build, minutes long on a fresh machine,
// counts against no test's timeout; `make test` runs it first.
package main

import (
	"fmt"
	"os"

	"github.com/mcptrunk/mcptrunk/internal/testkit/hydra"
)

func main() {
	path, err := hydra.Binary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "hydra for the tests:", path)
}
