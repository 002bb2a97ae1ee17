package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// wakeProgressEvery is how often a host waiting for a sleeping server to
// start hears that it still is.
const wakeProgressEvery = time.Second

// wake starts a sleeping server for a request (upstream.Client.Wake: once,
// however many requests wait). A host that gave the request a progress
// token hears notifications/progress while the server starts, so that it
// neither times out in silence nor shows a call that seems hung.
func (t *Trunk) wake(ctx context.Context, c *upstream.Client, params json.RawMessage) error {
	token := rawjson.MetaValue(params, "progressToken")
	if token == nil || len(t.hosts.all()) == 0 {
		return c.Wake(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wake(ctx) }()
	tick := time.NewTicker(wakeProgressEvery)
	defer tick.Stop()
	began := time.Now()
	for n := 0; ; n++ {
		msg := fmt.Sprintf("starting server %q", c.Name())
		if n > 0 {
			msg = fmt.Sprintf("still starting server %q (%s)", c.Name(), time.Since(began).Round(time.Second))
		}
		note, _ := json.Marshal(struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress int             `json:"progress"`
			Message  string          `json:"message"`
		}{token, n, msg})
		t.toHosts(c.Name(), "notifications/progress", note)
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}
