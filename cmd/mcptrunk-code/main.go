// Command mcptrunk-code is code mode's runner: mcptrunk starts one per
// program that mcp__trunk__run_code runs, and speaks JSON-RPC with it over
// its stdin and stdout (proxy/codemode/child). It runs the program with
// the JavaScript engine (proxy/codemode), which mcptrunk itself does not
// link, and bounds its own memory at -max-memory bytes, so that a program
// that allocates without end ends this process rather than the trunk.
//
// Install it next to mcptrunk (make build, the release archives) or on
// PATH: go install github.com/mcptrunk/mcptrunk/cmd/mcptrunk-code@latest.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/mcptrunk/mcptrunk/proxy/codemode"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

func main() {
	maxMemory := flag.Int64("max-memory", child.DefaultMaxMemoryBytes, "bound this process's memory at this many bytes")
	flag.Parse()
	if *maxMemory <= 0 {
		fmt.Fprintf(os.Stderr, "mcptrunk-code: -max-memory must be positive, got %d\n", *maxMemory)
		os.Exit(2)
	}
	// The collector holds the heap to the budget as long as it can; the
	// process limit ends the process when it cannot.
	debug.SetMemoryLimit(*maxMemory)
	if err := limitMemory(*maxMemory); err != nil {
		fmt.Fprintf(os.Stderr, "mcptrunk-code: bounding memory: %v\n", err)
		os.Exit(1)
	}
	if err := codemode.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "mcptrunk-code: %v\n", err)
		os.Exit(1)
	}
}
