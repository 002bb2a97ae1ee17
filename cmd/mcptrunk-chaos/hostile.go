package main

// The hostile tools: a server that attacks its client's memory and
// patience rather than merely failing. A trunk must survive each without
// holding what it is sent and without losing its other servers.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// addHostileTools adds the tools that write behind the server's back to
// out:
//
//	endless_line   starts a message and never ends its line (writes until the reader goes away)
//	log_flood      sends {count} notifications/message of {bytes} bytes each (default 64 of 1 MiB),
//	               {interval_ms} apart, then answers
//	progress_flood sends {count} notifications/progress of {bytes} bytes each for the call's
//	               progress token, then answers
//	never_answer   never answers, not even when cancelled
func addHostileTools(s *server.MCPServer, out io.Writer) {
	s.AddTool(mcp.NewTool("endless_line",
		mcp.WithDescription("Starts a message on stdout and never ends its line."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "chaos: endless_line: writing")
		chunk := strings.Repeat("x", 64<<10)
		if _, err := io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`); err != nil {
			return nil, err
		}
		for {
			if _, err := io.WriteString(out, chunk); err != nil {
				fmt.Fprintln(os.Stderr, "chaos: endless_line: the reader went away")
				os.Exit(1)
			}
		}
	})
	s.AddTool(mcp.NewTool("log_flood",
		mcp.WithDescription("Sends large notifications/message, then answers."),
		mcp.WithNumber("count", mcp.Description("How many (default 64).")),
		mcp.WithNumber("bytes", mcp.Description("Each one's data length (default 1 MiB).")),
		mcp.WithNumber("interval_ms", mcp.Description("Pause between two (default 0).")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, size := req.GetInt("count", 64), req.GetInt("bytes", 1<<20)
		data := hugeText(size)
		for i := range n {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"log_flood","data":"%d %s"}}`+"\n", i, data)
			if err := writePaced(ctx, out, line, i, req.GetInt("interval_ms", 0)); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("sent %d log messages of %d bytes", n, size)), nil
	})
	s.AddTool(mcp.NewTool("progress_flood",
		mcp.WithDescription("Sends large notifications/progress for the call's token, then answers."),
		mcp.WithNumber("count", mcp.Description("How many (default 64).")),
		mcp.WithNumber("bytes", mcp.Description("Each one's message length (default 1 MiB).")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, size := req.GetInt("count", 64), req.GetInt("bytes", 1<<20)
		if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
			return mcp.NewToolResultError("progress_flood needs a progress token"), nil
		}
		token, err := json.Marshal(req.Params.Meta.ProgressToken)
		if err != nil {
			return nil, err
		}
		msg := hugeText(size)
		for i := range n {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d,"message":"%s"}}`+"\n", token, i+1, n, msg)
			if err := writePaced(ctx, out, line, i, 0); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText(fmt.Sprintf("sent %d progress notifications of %d bytes", n, size)), nil
	})
	s.AddTool(mcp.NewTool("never_answer",
		mcp.WithDescription("Never answers, not even when the call is cancelled."),
	), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "chaos: never_answer: called")
		select {} // the process's end ends it
	})
}

// writePaced writes the i-th line of a flood, after interval ms from the
// one before; ctx ending (the call cancelled) stops it.
func writePaced(ctx context.Context, out io.Writer, line string, i, interval int) error {
	if i > 0 && interval > 0 {
		select {
		case <-time.After(time.Duration(interval) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	_, err := io.WriteString(out, line)
	return err
}
