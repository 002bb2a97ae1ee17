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
