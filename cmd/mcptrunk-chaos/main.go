// Command mcptrunk-chaos is a deliberately misbehaving stdio MCP server for
// mcptrunk's failure tests. -mode picks the misbehaviour:
//
//	ok            a valid server with one tool, ping_tool
//	exit          writes "chaos: exiting on purpose" to stderr and exits with status 3
//	garbage       writes a non-JSON line to stdout every 10ms and never reads a request
//	hang-init     reads stdin but never answers anything
//	stderr-flood  the ok server, plus a continuous flood of stderr output
//	crash-on-call the ok server, except that calling ping_tool exits with status 3
//
// Every mode ends by itself once stdin reaches EOF, so a test that forgets a
// child cannot leak it, except hang-init with -ignore-eof, which keeps
// running after EOF to test SIGTERM and SIGKILL escalation; -ignore-sigterm
// also ignores SIGTERM and SIGINT so that only SIGKILL ends it. garbage and
// hang-init give up after -max-life (default 60s) regardless. Signals keep
// their default effect in every mode.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	mode := flag.String("mode", "ok", "ok, exit, garbage, hang-init, stderr-flood or crash-on-call")
	ignoreEOF := flag.Bool("ignore-eof", false, "hang-init: keep running after stdin closes")
	ignoreTerm := flag.Bool("ignore-sigterm", false, "ignore SIGTERM and SIGINT, leaving only SIGKILL")
	maxLife := flag.Duration("max-life", 60*time.Second, "garbage and hang-init: exit after this long whatever happens")
	flag.Parse()

	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	}

	switch *mode {
	case "ok":
		serve(false)
	case "crash-on-call":
		serve(true)
	case "stderr-flood":
		go flood(os.Stderr)
		serve(false)
	case "exit":
		fmt.Fprintln(os.Stderr, "chaos: exiting on purpose")
		os.Exit(3)
	case "garbage":
		exitAfter(*maxLife)
		go exitOnEOF()
		garbage(os.Stdout)
	case "hang-init":
		exitAfter(*maxLife)
		_, _ = io.Copy(io.Discard, os.Stdin)
		if *ignoreEOF {
			select {} // only a signal (or -max-life) ends this
		}
	default:
		fmt.Fprintf(os.Stderr, "chaos: unknown -mode %q\n", *mode)
		os.Exit(2)
	}
}

// serve runs a valid MCP server until stdin closes. With crashOnCall its only
// tool kills the process mid-request, as an upstream that dies would.
func serve(crashOnCall bool) {
	s := server.NewMCPServer("chaos", "0.1.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("ping_tool", mcp.WithDescription("Answers pong.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if crashOnCall {
				fmt.Fprintln(os.Stderr, "chaos: crashing during tools/call")
				os.Exit(3)
			}
			return mcp.NewToolResultText("pong"), nil
		})
	// Listen rather than ServeStdio: ServeStdio installs its own SIGTERM and
	// SIGINT handlers, which would defeat -ignore-sigterm. Signals keep their
	// default effect here.
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(os.Stderr, "chaos: ", 0))
	if err := stdio.Listen(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

// garbageLines are what garbage mode writes: no line is valid JSON, and some
// are nearly so, to catch parsers that accept a prefix.
var garbageLines = []string{
	"this is not JSON",
	`{"jsonrpc":"2.0","id":1,"result":`,
	"\x00\x01\x02 binary noise",
	`}{"jsonrpc":"2.0"}`,
	"Content-Length: 42",
}

// garbage writes a garbage line every 10ms until the write fails or the
// process is ended by exitOnEOF or exitAfter.
func garbage(w io.Writer) {
	for i := 0; ; i++ {
		if _, err := fmt.Fprintln(w, garbageLines[i%len(garbageLines)]); err != nil {
			os.Exit(1)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// flood writes a 1 MiB burst, far more than a pipe buffers, then 64 KiB every
// 10ms: a parent that stops draining stderr soon blocks this writer, and the
// test shows whether the MCP side is still served.
func flood(w io.Writer) {
	line := "chaos: stderr flood " + strings.Repeat("=", 100) + "\n"
	burst := strings.Repeat(line, (1<<20)/len(line))
	chunk := strings.Repeat(line, (64<<10)/len(line))
	_, _ = io.WriteString(w, burst)
	for {
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitOnEOF reads and discards stdin, then exits: modes that do not serve
// requests still end when their parent closes the pipe.
func exitOnEOF() {
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// exitAfter ends the process after d, as a safety net for modes that would
// otherwise run forever.
func exitAfter(d time.Duration) {
	time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "chaos: -max-life %s reached\n", d)
		os.Exit(4)
	})
}
