package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/metrics"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// observeMux is the observability listener's routes: /metrics, and
// whatever else reports on the trunk t adds its handler here.
func observeMux(t *proxy.Trunk, m *metrics.Metrics) *http.ServeMux {
	mux := http.NewServeMux()
	if m != nil {
		mux.Handle("GET /metrics", m.Handler())
	}
	mux.Handle("/", statusPageHandler(t))
	return mux
}

// observeListener is the observability HTTP listener of `serve --metrics`.
// It is bound before the trunk is made, so a bad address fails the
// command before any server starts, and serves once the trunk exists.
type observeListener struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// listenObserve binds addr, which must be a loopback address (nothing on
// it asks for a token yet). The bound address is logged, so that a port 0
// can be found.
func listenObserve(addr string, logger *slog.Logger) (*observeListener, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	logger.Info("metrics listening", "addr", ln.Addr().String())
	return &observeListener{ln: ln, done: make(chan error, 1),
		srv: &http.Server{ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}}, nil
}

// serve answers requests with h behind localOnly until Close.
func (l *observeListener) serve(h http.Handler) {
	l.srv.Handler = localOnly(h)
	go func() { l.done <- l.srv.Serve(l.ln) }()
}

// Close stops the listener; requests in progress get until ctx ends.
func (l *observeListener) Close(ctx context.Context) error {
	if l.srv.Handler == nil { // never served
		return l.ln.Close()
	}
	err := l.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, l.srv.Close())
	}
	if serr := <-l.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// checkLoopback refuses an address that is not a loopback host: the
// listener answers anyone who can reach it, so it stays on this machine.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--metrics %q: want HOST:PORT, such as 127.0.0.1:9464", addr)
	}
	if !isLoopbackHost(host) {
		return fmt.Errorf("--metrics %q: only a loopback address (127.0.0.1, [::1] or localhost) is allowed: the listener has no authentication", addr)
	}
	return nil
}

func isLoopbackHost(host string) bool { return config.IsLoopbackHost(host) }

// localOnly answers only requests meant for this machine: a Host that is
// not a loopback name (a DNS name rebound to 127.0.0.1 by a web page) and
// an Origin other than the listener's own (a page's script on another
// origin) are refused, so a browser cannot be used to read the trunk.
func localOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !config.IsLoopbackHostPort(r.Host) {
			http.Error(w, "forbidden: the Host is not a loopback address", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, "http://"+r.Host) {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
