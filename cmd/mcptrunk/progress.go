package main

import (
	"time"

	"github.com/mcptrunk/mcptrunk/internal/liveline"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// startProgress shows the progress of the fleet's servers on env's stderr
// until Stop.
func (e *environment) startProgress(fleet func() *upstream.Fleet) *liveline.Progress {
	p := liveline.New(e.screen, isTerminal(e.screen), func() ([]string, int) {
		h := fleet()
		if h == nil {
			return nil, 0
		}
		clients := h.Clients()
		var names []string
		for _, c := range clients {
			if s, _ := c.State(); s == upstream.StateStarting || s == upstream.StateRestarting {
				names = append(names, c.Name())
			}
		}
		return names, len(clients)
	})
	ticker := time.NewTicker(liveline.Redraw)
	go func() {
		defer ticker.Stop()
		p.Run(ticker.C)
	}()
	return p
}

// serveHint is what a bare mcptrunk says when a person runs it in a
// terminal (stdin is one) rather than a host: that it is an MCP server
// waiting for a host on stdin, and how to try it instead. Nothing when
// stdin is not a terminal (a host's pipe) or stdin is not served (--http
// without --stdio).
func serveHint(stdinTerminal, servesStdin bool) string {
	if !stdinTerminal || !servesStdin {
		return ""
	}
	return `mcptrunk is an MCP server: it is waiting for a host (Claude Desktop, Claude Code, ...) to speak MCP
on stdin, and a host is what should start it. To try it from a terminal:
  mcptrunk list                   the servers, their state, and the tools, prompts and resources they offer
  mcptrunk call NAME '{...}'      call one tool (NAME as list prints it) and print the result
  mcptrunk --help                 every command
Ctrl-C ends it.
`
}
