package statuspage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// Listener is a loopback HTTP listener for what reports on the trunk (the
// page of `mcptrunk status`, the `serve --metrics` routes). It is bound
// first, so that a bad address fails a command before any server starts,
// and serves behind Guard once there is something to serve.
type Listener struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen binds addr, given by flag, which must be a loopback address:
// what is served there shows every server's errors and stderr, which are
// for this machine's user only.
func Listen(flag, addr string, logger *slog.Logger) (*Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s %q: want HOST:PORT, such as 127.0.0.1:0", flag, addr)
	}
	if !config.IsLoopbackHost(host) {
		return nil, fmt.Errorf("%s %q: only a loopback address (127.0.0.1, [::1] or localhost) is allowed", flag, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return &Listener{ln: ln, done: make(chan error, 1),
		srv: &http.Server{ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}}, nil
}

// Addr is the bound address, a port 0 resolved.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Serve answers requests with h behind Guard(h, token) until Close.
func (l *Listener) Serve(h http.Handler, token string) {
	l.srv.Handler = Guard(h, token)
	go func() { l.done <- l.srv.Serve(l.ln) }()
}

// Done delivers the error the listener stopped with, should it stop before
// Close is called (Close is then not needed, and would wait for it again).
func (l *Listener) Done() <-chan error { return l.done }

// Close stops the listener; requests in progress get until ctx ends.
func (l *Listener) Close(ctx context.Context) error {
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

// NewToken is a fresh random token for one run's page.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
