// Command mcptrunk-notes is an example stdio MCP server with an in-memory
// notebook. mcptrunk's demo, integration tests and benchmarks run it as an
// upstream: it offers tools, prompts, resources and a resource template, a
// tool named "search" that clashes with mcptrunk-weather's on purpose, a
// fidelity fixture ("rich"), cheap benchmark tools ("echo", "blob") and flags
// that make it slow to start, very large or awkwardly named.
//
// stdout carries the MCP protocol; logs go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	delay := flag.Duration("delay", 0, "sleep this long before serving, to simulate slow initialisation")
	extra := flag.Int("tools", 0, "register this many extra trivial tools named extra_000, extra_001, ...")
	longNames := flag.Bool("long-names", false, "also register a tool with a 100-character name and one named \""+illegalToolName+"\"")
	workers := flag.Int("workers", 64, "concurrent tool-call workers (mcp-go caps this at 100)")
	flag.Parse()

	logger := log.New(os.Stderr, "mcptrunk-notes: ", log.LstdFlags)
	if *extra < 0 || *workers < 1 {
		logger.Fatal("-tools must be >= 0 and -workers >= 1")
	}

	notes := newStore()
	s := server.NewMCPServer("notes", "0.1.0",
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(false, true),
		server.WithLogging(),
	)
	addTools(s, notes, *extra, *longNames)
	addPrompts(s, notes)
	addResources(s, notes)

	if *delay > 0 {
		logger.Printf("delaying start by %s", *delay)
		time.Sleep(*delay)
	}

	// mcp-go runs tools/call on a worker pool (default 5 workers, queue 100);
	// benchmarks that fire many calls at once need more. With a full queue it
	// handles calls on the read loop and logs a line per call, so the queue
	// gets mcp-go's maximum. Other requests get a goroutine each.
	err := server.ServeStdio(s,
		server.WithErrorLogger(logger),
		server.WithWorkerPoolSize(*workers),
		server.WithQueueSize(10000),
	)
	if err != nil && !errors.Is(err, context.Canceled) {
		logger.Fatal(err)
	}
}
