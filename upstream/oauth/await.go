package oauth

import (
	"context"
	"time"
)

// AwaitToken waits, for a server that needs authorisation, until a token
// for it is stored: by the authorization code flow it runs (within
// flowTimeout; opts as for Authorize), or by another process ("mcptrunk
// auth" in a terminal), which it sees by looking at the store every poll.
// A flow that fails is reported to failed, and the store is watched on. It
// reports whether a token was stored before ctx ended.
func AwaitToken(ctx context.Context, s Server, opts AuthorizeOptions, flowTimeout, poll time.Duration, failed func(error)) bool {
	flowCtx, cancel := context.WithTimeout(ctx, flowTimeout)
	flowDone := make(chan error, 1)
	go func() {
		_, err := Authorize(flowCtx, s, opts)
		flowDone <- err
	}()
	pending := flowDone
	defer func() {
		cancel()
		if pending != nil {
			<-pending
		}
	}()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case err := <-pending:
			pending = nil
			if err == nil {
				return true
			}
			if ctx.Err() != nil {
				return false
			}
			failed(err)
		case <-tick.C:
			if HasToken(s) {
				return true
			}
		}
	}
}
