// Package redisconn is a small Redis client: RESP2 over TCP or TLS, AUTH
// and SELECT on connect, a bounded pool of connections, and Lua scripts
// run by their SHA1. It is what the trunk's state store and its shared
// limits ask of one Redis primary, and no more.
package redisconn

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say where a Client connects and how long it waits.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// Username and Password are sent with AUTH on every new connection
	// when Password is set (the user too when it is set).
	Username, Password string
	// DB is selected on every new connection when it is not 0.
	DB int
	// TLS, when set, wraps every connection in TLS (rediss://).
	TLS *tls.Config
	// ClientName, when set, names the connections (CLIENT SETNAME), for
	// the server's CLIENT LIST.
	ClientName string
	// DialTimeout bounds a connect, TLS and the commands that set the
	// connection up (default 5 s). A command's request is written within
	// WriteTimeout of its start, and its reply read within ReadTimeout of
	// it (or WriteTimeout, if longer; default 3 s each): the requests are
	// small, so a command is bounded by one timeout, not their sum. A
	// context's deadline, when sooner, wins.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// PoolSize is the most connections open at once (default 10 per
	// CPU); a command waits for one at most ReadTimeout and a second.
	PoolSize int
}

// ErrNil is the error of a command whose reply is nil: GET of a missing key.
var ErrNil = errors.New("redis: nil")

// ErrClosed is the error of a command on a closed Client.
var ErrClosed = errors.New("redis: client closed")

// Error is an error reply of the server, e.g. "WRONGTYPE Operation
// against a key holding the wrong kind of value". The connection stays
// usable.
type Error string

func (e Error) Error() string { return string(e) }

// Client is a pool of connections to one Redis. Safe for concurrent use.
// A connection that saw an I/O or protocol error, or whose command's
// context ended before the reply was read, is closed, never reused: its
// next reply would be read by the wrong command.
type Client struct {
	opts  Options
	slots chan struct{} // one per connection open or in use
	mu    sync.Mutex
	idle  []*conn
	done  bool
}

type conn struct {
	nc        net.Conn
	br        *bufio.Reader // reads cn, counting
	read      int64         // bytes read from nc
	buf       []byte        // the last command written
	idleSince time.Time
}

// Read reads nc, counting what it read, so that Do knows whether a
// failed command got any of its reply.
func (cn *conn) Read(p []byte) (int, error) {
	n, err := cn.nc.Read(p)
	cn.read += int64(n)
	return n, err
}

// maxIdle is how long a connection may wait in the pool: past it, a
// firewall or NAT between may have forgotten it without a word, and a
// command on it would wait for its timeout.
const maxIdle = 30 * time.Minute

// New returns a Client of opts. It connects on the first command.
func New(opts Options) *Client {
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 5 * time.Second
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = 3 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 3 * time.Second
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 10 * runtime.GOMAXPROCS(0)
	}
	return &Client{opts: opts, slots: make(chan struct{}, opts.PoolSize)}
}

// Do sends one command (its name and arguments: strings, []byte,
// integers, floats, bools) and returns its reply: a string for a simple
// string, an int64 for an integer, []byte for a bulk string, []any for an
// array (nil within for a nil, Error for an error). A nil reply is the
// error ErrNil, an error reply the error Error. When ctx ends first, the
// error is ctx's.
//
// A command that fails on a pooled connection that the server closed
// while it was idle (a restarted Redis, its idle timeout), before any of
// a reply came, is sent once more, on a new connection: the connection
// was closed before the command could run.
func (c *Client) Do(ctx context.Context, args ...any) (any, error) {
	var cmd []byte
	fresh := false
	for {
		cn, reused, err := c.get(ctx, fresh)
		if err != nil {
			return nil, err
		}
		if cmd == nil {
			// Written into the connection's buffer, kept from one
			// command to the next; a resend writes the same bytes.
			if cn.buf, err = appendCommand(cn.buf[:0], args); err != nil {
				c.put(cn, false)
				return nil, err
			}
			cmd = cn.buf
		}
		before := cn.read
		v, reusable, err := c.roundTrip(ctx, cn, cmd)
		if cap(cn.buf) > readBuffer {
			cn.buf = nil // a large value's command is not kept
		}
		c.put(cn, !reusable)
		if err == nil || isReply(err) || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return v, err
		}
		c.dropIdle()
		if reused && !fresh && cn.read == before && closedByPeer(err) {
			fresh = true
			continue
		}
		return nil, err
	}
}

// isReply says whether err is the server's answer (the connection is
// fine), rather than a failure to get one.
func isReply(err error) bool {
	var e Error
	return errors.Is(err, ErrNil) || errors.As(err, &e)
}

// closedByPeer says whether err is what a connection the server closed
// gives when used again.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// roundTrip writes cmd on cn and reads its reply, within the timeouts
// and ctx: when ctx ends, cn's deadline is moved to the past, which ends
// the write or read at once. reusable says whether cn may serve another
// command: it got the whole reply and ctx did not end meanwhile.
func (c *Client) roundTrip(ctx context.Context, cn *conn, cmd []byte) (v any, reusable bool, err error) {
	now := time.Now()
	wd, rd := now.Add(c.opts.WriteTimeout), now.Add(max(c.opts.ReadTimeout, c.opts.WriteTimeout))
	if d, ok := ctx.Deadline(); ok {
		wd, rd = earlier(wd, d), earlier(rd, d)
	}
	if err := cn.nc.SetWriteDeadline(wd); err != nil {
		return nil, false, err
	}
	if err := cn.nc.SetReadDeadline(rd); err != nil {
		return nil, false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = cn.nc.SetDeadline(time.Unix(1, 0)) })
	v, err = cn.exchange(cmd)
	if !stop() {
		// ctx ended during the exchange: whatever was read, the
		// connection's deadline is, or is about to be, in the past, so
		// it serves no other command.
		if err == nil || isReply(err) {
			return v, false, err
		}
		return nil, false, ctx.Err()
	}
	if err == nil || isReply(err) {
		return v, true, err
	}
	var ne net.Error
	if d, ok := ctx.Deadline(); ok && errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(d) {
		return nil, false, context.DeadlineExceeded // ctx's deadline, a moment before ctx says so
	}
	return nil, false, err
}

func (cn *conn) exchange(cmd []byte) (any, error) {
	if _, err := cn.nc.Write(cmd); err != nil {
		return nil, err
	}
	v, err := readReply(cn.br)
	switch v := v.(type) {
	case nil:
		if err == nil {
			return nil, ErrNil
		}
	case Error:
		return nil, v
	}
	return v, err
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// get takes a slot and a connection: an idle one unless fresh, else a new
// one.
func (c *Client) get(ctx context.Context, fresh bool) (*conn, bool, error) {
	select {
	case c.slots <- struct{}{}:
	default:
		t := time.NewTimer(c.opts.ReadTimeout + time.Second)
		defer t.Stop()
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-t.C:
			return nil, false, errors.New("redis: every connection of the pool stayed busy")
		}
	}
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		<-c.slots
		return nil, false, ErrClosed
	}
	for n := len(c.idle); n > 0 && !fresh; n-- {
		cn := c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		if time.Since(cn.idleSince) > maxIdle {
			_ = cn.nc.Close()
			continue
		}
		c.mu.Unlock()
		return cn, true, nil
	}
	c.mu.Unlock()
	cn, err := c.dial(ctx)
	if err != nil {
		<-c.slots
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, err
	}
	return cn, false, nil
}

// put gives cn's slot back, and cn to the idle connections unless it is
// broken or the Client closed.
func (c *Client) put(cn *conn, broken bool) {
	c.mu.Lock()
	if broken || c.done {
		c.mu.Unlock()
		_ = cn.nc.Close()
	} else {
		cn.idleSince = time.Now()
		c.idle = append(c.idle, cn)
		c.mu.Unlock()
	}
	<-c.slots
}

// dropIdle closes the idle connections: one failed, and the others most
// likely went with the same server.
func (c *Client) dropIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, cn := range idle {
		_ = cn.nc.Close()
	}
}

// dial connects, and sets the connection up: TLS, AUTH, SELECT, CLIENT
// SETNAME, within DialTimeout.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.opts.Addr)
	if err != nil {
		return nil, err
	}
	if c.opts.TLS != nil {
		tc := tls.Client(nc, c.opts.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	cn := &conn{nc: nc}
	cn.br = bufio.NewReaderSize(cn, readBuffer)
	if err := c.setUp(ctx, cn); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return cn, nil
}

// setUp authenticates cn, names it and selects its database. It says
// HELLO 2 (RESP2 kept) with AUTH and SETNAME, as Redis 6 and later take
// them: a password is then accepted by a server that has none, as other
// clients' are. A server older than HELLO gets AUTH and CLIENT SETNAME.
func (c *Client) setUp(ctx context.Context, cn *conn) error {
	do := func(args ...any) error {
		cmd, err := appendCommand(nil, args)
		if err == nil {
			var reusable bool
			if _, reusable, err = c.roundTrip(ctx, cn, cmd); err == nil && !reusable {
				err = ctx.Err() // ctx ended as the reply came
			}
		}
		if err != nil {
			return fmt.Errorf("redis %s: %w", args[0], err)
		}
		return nil
	}
	if c.opts.Password != "" || c.opts.ClientName != "" {
		hello := []any{"HELLO", 2}
		if c.opts.Password != "" {
			user := c.opts.Username
			if user == "" {
				user = "default"
			}
			hello = append(hello, "AUTH", user, c.opts.Password)
		}
		if c.opts.ClientName != "" {
			hello = append(hello, "SETNAME", c.opts.ClientName)
		}
		err := do(hello...)
		var e Error
		if errors.As(err, &e) && strings.HasPrefix(string(e), "ERR unknown command") {
			err = nil
			switch {
			case c.opts.Password != "" && c.opts.Username != "":
				err = do("AUTH", c.opts.Username, c.opts.Password)
			case c.opts.Password != "":
				err = do("AUTH", c.opts.Password)
			}
			if err == nil && c.opts.ClientName != "" {
				err = do("CLIENT", "SETNAME", c.opts.ClientName)
			}
		}
		if err != nil {
			return err
		}
	}
	if c.opts.DB != 0 {
		return do("SELECT", c.opts.DB)
	}
	return nil
}

// Close closes the idle connections, and the others as their commands
// end; commands after it fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	c.dropIdle()
	return nil
}
