package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/browser"
	"github.com/mcptrunk/mcptrunk/internal/statuspage"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// statusCommand starts the config's servers, as serve does but with no
// host, and serves the status page on a loopback address until it is
// interrupted: a way to watch the servers (and see one fail and restart)
// without an MCP host. The page's URL carries a token made for this run,
// so only who reads the terminal (or the browser it opened) sees it.
type statusCommand struct {
	open   bool
	listen string
}

func (c *statusCommand) flags(fs *flagSet) {
	fs.BoolVar(&c.open, "open", false, "open the status page in the browser")
	fs.StringVar(&c.listen, "listen", "127.0.0.1:0", "the loopback address to serve the page on (port 0: any free port)")
}

func (c *statusCommand) run(ctx context.Context, env *environment) error {
	logger, err := env.logger(slog.LevelWarn)
	if err != nil {
		return err
	}
	cfg, err := env.loadConfig()
	if err != nil {
		return err
	}
	ln, err := statuspage.Listen("--listen", c.listen, logger)
	if err != nil {
		return err
	}
	// Servers that go away are restarted, as under serve: watching that
	// happen is much of what the page is for.
	t := proxy.New(cfg, &proxy.Options{Logger: logger, Version: version(), Restart: upstream.DefaultRestartPolicy})
	defer t.Close(context.WithoutCancel(ctx))
	t.Start(nil, "")

	token := statuspage.NewToken()
	ln.Serve(statusPageHandler(t), token)
	url := "http://" + ln.Addr() + "/?token=" + token
	fmt.Fprintf(env.stdout, "status page: %s\n", url)
	if c.open {
		if err := browser.Open(url); err != nil {
			fmt.Fprintf(env.stderr, "mcptrunk: could not open a browser (%v); open the address above\n", err)
		}
	}
	select {
	case <-ctx.Done():
	case err = <-ln.Done():
		return fmt.Errorf("status page: %w", err)
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	return ln.Close(shutdown)
}

// statusPageHandler is the status page reading t: what `status` serves,
// and what the `serve --metrics` listener serves at /.
func statusPageHandler(t *proxy.Trunk) http.Handler {
	return statuspage.New(func() statuspage.Snapshot {
		s := t.Status()
		pins := make(map[string]statuspage.PinCounts, len(s.Pins))
		for server, p := range s.Pins {
			pins[server] = statuspage.PinCounts{Drift: p.Drift, Withheld: p.Withheld, Findings: p.Findings}
		}
		snap := statuspage.Snapshot{
			Servers: s.Servers, MaxMessageBytes: t.MaxMessageBytes(), DroppedNotifications: s.DroppedNotifications,
			ParkedCalls: s.ParkedCalls, Sessions: s.Sessions, PinMode: s.PinMode, Pins: pins, Profiles: s.Profiles, Version: version(),
		}
		if st := s.Store; st != nil {
			snap.Store = &statuspage.Store{Kind: st.Kind, Where: st.Where, Up: st.Up, Since: st.Since, Error: st.Error}
		}
		return snap
	}, nil)
}
