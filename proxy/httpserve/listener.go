package httpserve

import (
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// The listener's own limits, below HTTP: every connection costs a file
// descriptor, which the trunk also needs for its servers' pipes, so the
// connections open at once are bounded, in all and per client address
// (one client cannot take them all), and an idle keep-alive connection
// is closed (IdleTimeout). A connection past a bound is closed at once,
// before anything is read from it.

// Server is the http.Server for h: the header and idle timeouts, and its
// errors logged to errorLog (nil: the standard logger).
func (h *Handler) Server(errorLog *log.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, IdleTimeout: h.opts.IdleTimeout, ErrorLog: errorLog}
}

// headerTimeout bounds the reading of a request's headers.
const headerTimeout = 10 * time.Second

// Listener bounds the connections ln hands on (Options.MaxConns and
// MaxConnsPerClient); serve h's Server on it.
func (h *Handler) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, total: h.opts.MaxConns, perClient: h.opts.MaxConnsPerClient, logger: h.logger, open: map[string]int{}}
}

type limitListener struct {
	net.Listener
	total, perClient int
	logger           *slog.Logger

	mu      sync.Mutex
	open    map[string]int // connections open per client address
	all     int
	refused int       // connections refused since the last warning
	warned  time.Time // when the last warning was logged
}

// Accept returns the next connection within the bounds, closing those
// past them.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := hostPart(c.RemoteAddr().String())
		if l.admit(client) {
			return &limitedConn{Conn: c, release: func() { l.release(client) }}, nil
		}
		_ = c.Close()
	}
}

func (l *limitListener) admit(client string) bool {
	l.mu.Lock()
	if l.all < l.total && l.open[client] < l.perClient {
		l.all++
		l.open[client]++
		l.mu.Unlock()
		return true
	}
	l.refused++
	n, warn := l.refused, time.Since(l.warned) >= warnEvery
	if warn {
		l.refused, l.warned = 0, time.Now()
	}
	all, mine := l.all, l.open[client]
	l.mu.Unlock()
	if warn {
		l.logger.Warn("refused connections past the limits (trunk.http.maxConnections, maxConnectionsPerClient)",
			"client", client, "refused", n, "open", all, "openFromClient", mine)
	}
	return false
}

func (l *limitListener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all--
	if l.open[client]--; l.open[client] <= 0 {
		delete(l.open, client)
	}
}

// hostPart is an address without its port.
func hostPart(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// A limitedConn gives its place back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
