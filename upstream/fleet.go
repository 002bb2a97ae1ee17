package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/upstream/catalogcache"
)

// Options configure a Fleet. A nil *Options is valid.
type Options struct {
	// Logger receives the servers' records; nil discards them.
	Logger *slog.Logger
	// Concurrency is how many servers start at once (default
	// DefaultConcurrency).
	Concurrency int
	// Version is reported to every server as clientInfo.version.
	Version string
	// Capabilities is the client capabilities object sent to every server in
	// initialize: the trunk only claims what its host can do. Nil sends {}.
	Capabilities []byte
	// Events receive what the servers report.
	Events Events
	// Restart is how servers that go away or fail to start are restarted;
	// the zero value never restarts them.
	Restart RestartPolicy
	// Prefer2025: the host speaks a revision before the stateless one.
	// A server left to negotiate ("protocolVersion" unset) that offers both
	// revisions is then spoken to at protocol.Revision2025 (initialize is tried
	// first, server/discover only when it is refused), so that it behaves
	// for the host exactly as it would directly: its server-to-client
	// requests, for one, exist only there. A server that offers only the
	// stateless revision is still spoken to at it, and the trunk
	// translates between the two.
	Prefer2025 bool
	// CacheDir is the catalog cache's directory (see catalogcache); ""
	// means catalogcache.DefaultDir. Every server's catalog is cached after
	// discovery; a lazy server is listed from it without being started.
	CacheDir string
	// RefreshCache starts every server, lazy ones too, and rewrites its
	// cache entry (check --refresh).
	RefreshCache bool
	// Dial connects each server; nil picks the transport by the spec's
	// type. Tests give servers that are not processes this way.
	Dial Dialer
	// Authorization gives the Authorization header of each HTTP request
	// to a server with per-user credentials (config.Spec.PerUser), in place
	// of OAuth: the credential of the caller the Fleet's instances serve.
	// refused is the value the server has just refused, "" when none
	// (remote.Endpoint.Authorization).
	Authorization func(ctx context.Context, server, refused string) (string, error)
	// MaxMessageBytes is the longest message read from a server
	// (trunk.maxMessageBytes; 0: no limit), enforced while reading.
	MaxMessageBytes int
}

// Fleet is the set of upstream servers. It starts them with bounded
// concurrency, keeps each one's state and catalog, and shuts them all down
// in order. It is safe for concurrent use.
type Fleet struct {
	// fixed at creation
	opts    clientOptions
	limit   int
	logger  *slog.Logger
	life    context.Context // ends at Close: cancels starts in progress
	stop    context.CancelFunc
	starts  sync.WaitGroup // StartAll and Add calls in progress
	settled chan struct{}  // closed when the first StartAll has settled

	mu      sync.Mutex
	clients map[string]*Client
	closed  bool
}

// NewFleet returns an empty Fleet.
func NewFleet(opts *Options) *Fleet {
	if opts == nil {
		opts = &Options{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	limit := opts.Concurrency
	if limit <= 0 {
		limit = config.DefaultConcurrency
	}
	dir := opts.CacheDir
	if dir == "" {
		var err error
		if dir, err = catalogcache.DefaultDir(); err != nil {
			logger.Warn("no catalog cache: lazy servers start at once", "error", err)
		}
	}
	var cache *catalogcache.Store
	if dir != "" {
		cache = catalogcache.Open(dir)
	}
	life, stop := context.WithCancel(context.Background())
	return &Fleet{
		opts: clientOptions{
			logger:        logger,
			events:        opts.Events,
			version:       opts.Version,
			capabilities:  opts.Capabilities,
			prefer2025:    opts.Prefer2025,
			restart:       opts.Restart,
			cache:         cache,
			refresh:       opts.RefreshCache,
			dial:          opts.Dial,
			authorization: opts.Authorization,
			maxMessage:    opts.MaxMessageBytes,
		},
		limit:   limit,
		logger:  logger,
		life:    life,
		stop:    stop,
		settled: make(chan struct{}),
		clients: map[string]*Client{},
	}
}

// Settled is closed when StartAll has returned and every server it started
// has finished its first discovery or failed.
func (h *Fleet) Settled() <-chan struct{} { return h.settled }

// StartAll starts every spec, at most Concurrency at once, and returns when
// each has connected and listed its tools, or failed. Disabled specs are
// registered without starting. The error joins every failure; the servers
// that did start are ready whatever it says. Call it once.
func (h *Fleet) StartAll(ctx context.Context, specs []config.Spec) error {
	defer close(h.settled)
	var (
		g    errgroup.Group
		mu   sync.Mutex
		errs []error
	)
	g.SetLimit(h.limit)
	var started []*Client
	for _, spec := range specs {
		c, err := h.register(spec)
		if err != nil {
			// Servers started earlier in this loop may be appending already.
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			continue
		}
		started = append(started, c)
		if spec.Invalid != nil && !spec.Disabled {
			err := c.invalid()
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		if !startable(spec) {
			continue
		}
		g.Go(func() error {
			defer h.starts.Done()
			if err := h.startClient(ctx, c); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // every goroutine returns nil; failures are in errs
	for _, c := range started {
		select {
		case <-c.Settled():
		case <-ctx.Done():
		case <-h.life.Done():
		}
	}
	return errors.Join(errs...)
}

// Add starts one more server and returns once it is ready or failed.
func (h *Fleet) Add(ctx context.Context, spec config.Spec) error {
	c, err := h.register(spec)
	if err != nil {
		return err
	}
	if spec.Invalid != nil && !spec.Disabled {
		return c.invalid()
	}
	if !startable(spec) {
		return nil
	}
	defer h.starts.Done()
	return h.startClient(ctx, c)
}

// register validates spec's name and records a Client for it. For a spec
// that is not disabled it counts a start in h.starts (under the lock that
// Close takes, so Close never waits on a count that is still rising); the
// caller must start it and call h.starts.Done.
func (h *Fleet) register(spec config.Spec) (*Client, error) {
	id, err := naming.ServerID(spec.Name)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("server %q: the trunk is shutting down", spec.Name)
	}
	if old, ok := h.clients[id]; ok {
		return nil, fmt.Errorf("server %q: its name collides with server %q (both become %q)", spec.Name, old.spec.Name, id)
	}
	c := newClient(id, spec, h.opts)
	h.clients[id] = c
	if startable(spec) {
		h.starts.Add(1)
	}
	return c, nil
}

// startClient starts c with a context that also ends when the Fleet closes.
func (h *Fleet) startClient(ctx context.Context, c *Client) error {
	if h.life.Err() != nil {
		// Close came while this start waited for a slot: do not spawn a
		// server only to kill it.
		return fmt.Errorf("server %q: the trunk is shutting down", c.id)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.life, cancel)
	defer stop()
	return c.start(ctx)
}

// Remove shuts one server down and forgets it.
func (h *Fleet) Remove(ctx context.Context, name string) error {
	h.mu.Lock()
	c, ok := h.clients[name]
	delete(h.clients, name)
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("server %q: not configured", name)
	}
	err := c.Close(ctx)
	c.changed()
	return err
}

// Client returns the server called name (its normalised identifier).
func (h *Fleet) Client(name string) (*Client, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.clients[name]
	return c, ok
}

// Clients returns every registered server, sorted by name.
func (h *Fleet) Clients() []*Client {
	h.mu.Lock()
	out := make([]*Client, 0, len(h.clients))
	for _, c := range h.clients {
		out = append(out, c)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Failure is a server that is not working, and why.
type Failure struct {
	Server string
	Err    error
}

// Failures lists the servers in StateFailed, sorted by name.
func (h *Fleet) Failures() []Failure {
	var out []Failure
	for _, c := range h.Clients() {
		if state, err := c.State(); state == StateFailed {
			out = append(out, Failure{Server: c.id, Err: err})
		}
	}
	return out
}

// Close shuts every server down: it cancels starts still in progress, then
// closes all servers at once (each: stdin closed, wait, SIGTERM, SIGKILL of
// its process group) and waits for them. Idempotent and safe to call
// concurrently; later calls wait for nothing.
func (h *Fleet) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	clients := make([]*Client, 0, len(h.clients))
	for _, c := range h.clients {
		clients = append(clients, c)
	}
	h.mu.Unlock()

	h.stop()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("closing server %q: %w", c.id, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	h.starts.Wait()
	return errors.Join(errs...)
}
