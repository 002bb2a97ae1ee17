package proxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/proxy/relay"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// resyncConn is c's current connection as relay.Resync knows it.
func resyncConn(c *upstream.Client) relay.Conn {
	st := c.Status()
	return relay.Conn{Server: st.Server, Since: st.Since, Ready: st.State == upstream.StateReady, Logging: c.Init().Capabilities.Logging}
}

// resync tells every server that (re)connected since it was last told
// what the host asked for, each on a goroutine of the trunk's own.
func (t *Trunk) resync() {
	for _, c := range t.clients() {
		level, uris, ok := t.toResync.Due(resyncConn(c))
		if !ok {
			continue
		}
		t.workers.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stop := context.AfterFunc(t.life, cancel)
			defer stop()
			if level != nil {
				if _, err := c.Call(ctx, "logging/setLevel", level); err != nil {
					t.logger.Warn("passing the log level on failed", "server", c.Name(), "error", err)
				}
			}
			for _, uri := range uris {
				params, _ := json.Marshal(map[string]string{"uri": uri})
				if _, err := c.Call(ctx, "resources/subscribe", params); err != nil {
					t.logger.Warn("renewing a subscription failed", "server", c.Name(), "uri", logkey.Clip(uri), "error", err)
				}
			}
		})
	}
}
