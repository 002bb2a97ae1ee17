// Command mcptrunk-chaos is a deliberately misbehaving stdio MCP server for
// mcptrunk's failure tests. -mode picks how a start of the process
// misbehaves:
//
//	ok            a valid server (the tools below)
//	exit          writes "chaos: exiting on purpose" to stderr and exits with status 3
//	garbage       writes a non-JSON line to stdout every 10ms and never reads a request
//	hang-init     reads stdin but never answers anything
//	stderr-flood  the ok server, plus a continuous flood of stderr output
//	crash-on-call the ok server, except that calling ping_tool exits with status 3
//
// The serving modes (ok, stderr-flood, crash-on-call) offer these tools, so
// one process can be told to misbehave in the middle of a working session:
//
//	ping_tool         answers "pong" (crash-on-call: exits with status 3 instead)
//	crash             exits with status 3 in the middle of the call
//	hang              never answers, unless the call is cancelled
//	garbage_then_ok   writes {lines} invalid JSON-RPC lines to stdout, then answers "ok"
//	huge              answers with a text of {bytes} bytes (default 20 MB) on one line;
//	                  with {escaping} the text is quotes and newlines (twice as long encoded)
//	huge_log          sends one notifications/message of {bytes} bytes, then answers
//	notify_flood      sends {count} notifications/message as fast as it can, then answers
//
//	endless_line, log_flood, progress_flood, never_answer: the hostile tools (hostile.go)
//
//	redefine          sets ping_tool's description to {description} and announces
//	                  notifications/tools/list_changed (the server declares tools.listChanged)
//
// and a resource template, chaos://huge/{bytes}, whose reads are texts of
// that many bytes.
//
// The definitions can be changed from the environment, for the tests of
// pinning (a definition that changes between runs or during a session):
//
//	CHAOS_PING_DESCRIPTION  ping_tool's description (default "Answers pong.")
//	CHAOS_EXTRA_TOOL        when set to a name, one more tool of that name is offered,
//	                        described as "An extra tool.", that answers "extra"
//	CHAOS_NO_HANG           when set (non-empty), the hang tool is not offered
//	CHAOS_PING_ARG          when set to a name, ping_tool takes an optional string
//	                        argument of that name (its input schema changes)
//	CHAOS_LIST_DELAY        a duration resources/list waits before its answer: a
//	                        server that lists its tools well before the rest
//	CHAOS_INSTRUCTIONS      the instructions its initialize result gives (none by default)
//	CHAOS_EXTENSION         when set to an identifier, the extension it declares
//	                        (capabilities.extensions, with no settings)
//
// Making the fault stop: with -state-file PATH every start of the process
// reads a counter from PATH (missing: 0), writes it back plus one, and so
// knows its start number k (0 for the first start). Only the starts chosen
// by -crash-first N (k < N) or -faulty-starts (ranges of k, as "1-2,5")
// misbehave as -mode says; the others run as -mode ok. So
// "-mode exit -state-file F -crash-first 2" fails its first two starts and
// then serves, and "-mode hang-init -state-file F -faulty-starts 1-1" serves,
// hangs in initialize once it was restarted, then serves again.
//
// Ending: every mode ends by itself once stdin reaches EOF, so a test that
// forgets a child cannot leak it, unless told otherwise: -eof-delay D waits
// D after EOF before exiting, -ignore-eof never exits on EOF (only a signal
// or -max-life ends it), and -ignore-sigterm also ignores SIGTERM and SIGINT
// so that only SIGKILL ends it. garbage and hang-init, and every mode with
// -ignore-eof or -eof-delay, give up after -max-life (default 60s)
// regardless. Signals keep their default effect otherwise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// options are the command line, parsed.
type options struct {
	mode         string
	ignoreEOF    bool
	eofDelay     time.Duration
	ignoreTerm   bool
	maxLife      time.Duration
	stateFile    string
	crashFirst   int
	faultyStarts string
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", "ok", "ok, exit, garbage, hang-init, stderr-flood or crash-on-call")
	flag.BoolVar(&o.ignoreEOF, "ignore-eof", false, "keep running after stdin closes (until a signal or -max-life)")
	flag.DurationVar(&o.eofDelay, "eof-delay", 0, "after stdin closes, wait this long before exiting")
	flag.BoolVar(&o.ignoreTerm, "ignore-sigterm", false, "ignore SIGTERM and SIGINT, leaving only SIGKILL")
	flag.DurationVar(&o.maxLife, "max-life", 60*time.Second, "garbage, hang-init, -ignore-eof and -eof-delay: exit after this long whatever happens")
	flag.StringVar(&o.stateFile, "state-file", "", "count starts in this file; with -crash-first or -faulty-starts only some starts misbehave")
	flag.IntVar(&o.crashFirst, "crash-first", -1, "with -state-file: only starts 0..N-1 misbehave as -mode says; later ones run as -mode ok")
	flag.StringVar(&o.faultyStarts, "faulty-starts", "", "with -state-file: the starts that misbehave, as 0-based ranges (\"1-2,5\")")
	flag.Parse()

	if o.ignoreTerm {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	}
	if o.ignoreEOF || o.eofDelay > 0 {
		exitAfter(o.maxLife)
	}
	mode, start, err := o.effectiveMode()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if o.stateFile != "" {
		fmt.Fprintf(os.Stderr, "chaos: start %d, mode %s\n", start, mode)
	}

	switch mode {
	case "ok":
		serve(o, start, false)
	case "crash-on-call":
		serve(o, start, true)
	case "stderr-flood":
		go flood(os.Stderr)
		serve(o, start, false)
	case "exit":
		fmt.Fprintln(os.Stderr, "chaos: exiting on purpose")
		os.Exit(3)
	case "garbage":
		exitAfter(o.maxLife)
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			afterEOF(o)
		}()
		garbage(os.Stdout)
	case "hang-init":
		exitAfter(o.maxLife)
		_, _ = io.Copy(io.Discard, os.Stdin)
		if o.ignoreEOF {
			select {} // only a signal (or -max-life) ends this
		}
		afterEOF(o)
	default:
		fmt.Fprintf(os.Stderr, "chaos: unknown -mode %q\n", mode)
		os.Exit(2)
	}
}

// effectiveMode is the mode this start runs in, and its start number (0
// without -state-file).
func (o options) effectiveMode() (string, int, error) {
	if o.stateFile == "" {
		if o.crashFirst >= 0 || o.faultyStarts != "" {
			return "", 0, errors.New("-crash-first and -faulty-starts need -state-file")
		}
		return o.mode, 0, nil
	}
	faulty, err := parseStarts(o.crashFirst, o.faultyStarts)
	if err != nil {
		return "", 0, err
	}
	start, err := countStart(o.stateFile)
	if err != nil {
		return "", 0, err
	}
	if faulty(start) {
		return o.mode, start, nil
	}
	return "ok", start, nil
}

// parseStarts returns which start numbers misbehave. With neither flag
// every start does.
func parseStarts(crashFirst int, ranges string) (func(int) bool, error) {
	type span struct{ from, to int }
	var spans []span
	if crashFirst >= 0 {
		spans = append(spans, span{0, crashFirst - 1})
	}
	for _, part := range strings.Split(ranges, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := strconv.Atoi(lo)
		if err != nil || from < 0 {
			return nil, fmt.Errorf("-faulty-starts: bad start %q", part)
		}
		to := from
		if isRange {
			if to, err = strconv.Atoi(hi); err != nil || to < from {
				return nil, fmt.Errorf("-faulty-starts: bad range %q", part)
			}
		}
		spans = append(spans, span{from, to})
	}
	if crashFirst < 0 && len(spans) == 0 {
		return func(int) bool { return true }, nil
	}
	return func(k int) bool {
		for _, s := range spans {
			if s.from <= k && k <= s.to {
				return true
			}
		}
		return false
	}, nil
}

// countStart reads the start counter in path, writes it back plus one, and
// returns the value read. The new value is written to a temporary file and
// renamed, so a reader never sees half a number. Starts of one server are
// sequential (the trunk restarts a server once the previous process went
// away), so no lock is needed.
func countStart(path string) (int, error) {
	n := 0
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if s := strings.TrimSpace(string(data)); s != "" {
			if n, err = strconv.Atoi(s); err != nil {
				return 0, fmt.Errorf("-state-file %s: not a counter: %q", path, s)
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return 0, fmt.Errorf("-state-file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".chaos-state-*")
	if err != nil {
		return 0, fmt.Errorf("-state-file: %w", err)
	}
	_, err = fmt.Fprintf(tmp, "%d\n", n+1)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return 0, fmt.Errorf("-state-file: %w", err)
	}
	return n, nil
}

// afterEOF ends the process once stdin has closed, as -ignore-eof and
// -eof-delay say.
func afterEOF(o options) {
	if o.ignoreEOF {
		fmt.Fprintln(os.Stderr, "chaos: stdin closed; ignoring it")
		select {} // only a signal (or -max-life) ends this
	}
	if o.eofDelay > 0 {
		fmt.Fprintf(os.Stderr, "chaos: stdin closed; exiting in %s\n", o.eofDelay)
		time.Sleep(o.eofDelay)
	}
	os.Exit(0)
}

// lockedWriter serialises writes to stdout between the MCP server and the
// tools that write there behind its back (garbage, notification floods).
// The server writes each message with one Write call, so holding the lock
// per Write keeps every line whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serve runs a valid MCP server until stdin closes. With crashOnCall
// ping_tool kills the process mid-request, as an upstream that dies would.
func serve(o options, start int, crashOnCall bool) {
	out := &lockedWriter{w: os.Stdout}
	s := newServer(out, crashOnCall)
	// Listen rather than ServeStdio: ServeStdio installs its own SIGTERM and
	// SIGINT handlers, which would defeat -ignore-sigterm. Signals keep their
	// default effect here.
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(os.Stderr, "chaos: ", 0))
	if err := stdio.Listen(context.Background(), os.Stdin, out); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	afterEOF(o)
}

// newServer is the MCP server of the serving modes, its definitions as the
// environment says; the tools that write behind the server's back write to
// out.
func newServer(out io.Writer, crashOnCall bool) *server.MCPServer {
	// Logging and a subscribable resource, with every such request named on
	// stderr: what a restarted server is asked again can be seen.
	hooks := &server.Hooks{}
	listDelay, _ := time.ParseDuration(os.Getenv("CHAOS_LIST_DELAY"))
	hooks.AddBeforeAny(func(_ context.Context, _ any, method mcp.MCPMethod, _ any) {
		switch method {
		case mcp.MethodSetLogLevel, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
			fmt.Fprintf(os.Stderr, "chaos: request %s\n", method)
		case mcp.MethodResourcesList:
			time.Sleep(listDelay)
		}
	})
	// tools.listChanged: AddTool, as redefine calls it, then announces
	// notifications/tools/list_changed to the initialised session.
	opts := []server.ServerOption{server.WithToolCapabilities(true),
		server.WithLogging(), server.WithResourceCapabilities(true, false), server.WithHooks(hooks)}
	if text := os.Getenv("CHAOS_INSTRUCTIONS"); text != "" {
		opts = append(opts, server.WithInstructions(text))
	}
	if ext := os.Getenv("CHAOS_EXTENSION"); ext != "" {
		opts = append(opts, server.WithExtensions(map[string]any{ext: map[string]any{}}))
	}
	s := server.NewMCPServer("chaos", "0.1.0", opts...)
	s.AddResource(mcp.NewResource("chaos://state", "state", mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "chaos://state", MIMEType: "text/plain", Text: "ok"}}, nil
		})
	ping := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if crashOnCall {
			crash()
		}
		return mcp.NewToolResultText("pong"), nil
	}
	s.AddTool(pingTool(pingDescription()), ping)
	s.AddTool(mcp.NewTool("redefine",
		mcp.WithDescription("Sets ping_tool's description and announces notifications/tools/list_changed."),
		mcp.WithString("description", mcp.Required(), mcp.Description("ping_tool's new description.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d, err := req.RequireString("description")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		s.AddTool(pingTool(d), ping)
		return mcp.NewToolResultText("ping_tool redefined"), nil
	})
	if name := os.Getenv("CHAOS_EXTRA_TOOL"); name != "" {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("An extra tool.")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("extra"), nil
			})
	}
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exits with status 3 in the middle of the call.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			crash()
			return nil, nil
		})
	if os.Getenv("CHAOS_NO_HANG") == "" {
		s.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answers unless the call is cancelled.")),
			func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				fmt.Fprintln(os.Stderr, "chaos: hang: called")
				<-ctx.Done()
				fmt.Fprintf(os.Stderr, "chaos: hang cancelled: %v\n", ctx.Err())
				return nil, ctx.Err()
			})
	}
	s.AddTool(mcp.NewTool("garbage_then_ok",
		mcp.WithDescription("Writes invalid JSON-RPC lines to stdout, then answers ok."),
		mcp.WithNumber("lines", mcp.Description("How many junk lines (default 20).")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("lines", 20)
		for i := range n {
			if _, err := io.WriteString(out, junkLines[i%len(junkLines)]+"\n"); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("ok after %d junk lines", n)), nil
	})
	s.AddTool(mcp.NewTool("huge",
		mcp.WithDescription("Answers with one huge text, all on one line."),
		mcp.WithNumber("bytes", mcp.Description("The text's length (default 20 MB).")),
		mcp.WithBoolean("escaping", mcp.Description("Make the text of quotes and newlines, which JSON escapes: its encoded form is twice as long.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("bytes", 20<<20)
		if req.GetBool("escaping", false) {
			return mcp.NewToolResultText(escapingText(n)), nil
		}
		return mcp.NewToolResultText(hugeText(n)), nil
	})
	s.AddTool(mcp.NewTool("huge_log",
		mcp.WithDescription("Sends one notifications/message whose data is a text of {bytes} bytes, then answers."),
		mcp.WithNumber("bytes", mcp.Description("The log message's length (default 12 MiB).")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("bytes", 12<<20)
		line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"huge","data":"` + hugeText(n) + `"}}` + "\n"
		if _, err := io.WriteString(out, line); err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(fmt.Sprintf("sent a log message of %d bytes", n)), nil
	})
	s.AddResourceTemplate(mcp.NewResourceTemplate("chaos://huge/{bytes}", "huge", mcp.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			n, err := strconv.Atoi(strings.TrimPrefix(req.Params.URI, "chaos://huge/"))
			if err != nil || n < 0 || n > 64<<20 {
				return nil, fmt.Errorf("chaos://huge/{bytes}: bytes must be a number up to %d", 64<<20)
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: hugeText(n)}}, nil
		})
	s.AddTool(mcp.NewTool("notify_flood",
		mcp.WithDescription("Sends notifications/message as fast as it can, then answers."),
		mcp.WithNumber("count", mcp.Description("How many notifications (default 1000).")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("count", 1000)
		for i := range n {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":{"seq":%d,"of":%d}}}`+"\n", i, n)
			if _, err := io.WriteString(out, line); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("sent %d notifications", n)), nil
	})
	addHostileTools(s, out)
	return s
}

// pingDescription is ping_tool's description at start: $CHAOS_PING_DESCRIPTION,
// or "Answers pong.".
// pingTool is ping_tool's definition, with description and, when
// CHAOS_PING_ARG names one, an optional string argument.
func pingTool(description string) mcp.Tool {
	opts := []mcp.ToolOption{mcp.WithDescription(description)}
	if arg := os.Getenv("CHAOS_PING_ARG"); arg != "" {
		opts = append(opts, mcp.WithString(arg, mcp.Description("An argument ping_tool ignores.")))
	}
	return mcp.NewTool("ping_tool", opts...)
}

func pingDescription() string {
	if d := os.Getenv("CHAOS_PING_DESCRIPTION"); d != "" {
		return d
	}
	return "Answers pong."
}

func crash() {
	fmt.Fprintln(os.Stderr, "chaos: crashing during tools/call")
	os.Exit(3)
}

// hugeText is what huge answers: n bytes of a recognisable pattern, no
// character that JSON escapes.
func hugeText(n int) string {
	const pattern = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b strings.Builder
	b.Grow(n)
	for b.Len()+len(pattern) <= n {
		b.WriteString(pattern)
	}
	b.WriteString(pattern[:n-b.Len()])
	return b.String()
}

// escapingText is n bytes of quotes and newlines: each is two bytes once
// JSON-encoded.
func escapingText(n int) string {
	return strings.Repeat("\"\n", n/2) + strings.Repeat("\"", n%2)
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

// junkLines are what garbage_then_ok writes in a working session: the
// garbage lines, then lines that are JSON but not JSON-RPC a client could
// act on (no method, an array, an id this server never got and that no
// client sends). None names a method: a client would act on that.
var junkLines = append(append([]string{}, garbageLines...),
	`{"hello":"world"}`,
	`[1,2,3]`,
	`{"jsonrpc":"2.0","id":"chaos-never-sent","result":{}}`,
	`{"jsonrpc":"2.0","id":987654321,"result":{"content":[]}}`,
	`"just a string"`,
)

// garbage writes a garbage line every 10ms until the write fails or the
// process is ended by EOF or exitAfter.
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

// exitAfter ends the process after d, as a safety net for modes that would
// otherwise run forever.
func exitAfter(d time.Duration) {
	time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "chaos: -max-life %s reached\n", d)
		os.Exit(4)
	})
}
