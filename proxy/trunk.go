package proxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/internal/usercreds"
	"github.com/mcptrunk/mcptrunk/internal/workgroup"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
	"github.com/mcptrunk/mcptrunk/proxy/instances"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/proxy/relay"
	"github.com/mcptrunk/mcptrunk/proxy/signin"
	"github.com/mcptrunk/mcptrunk/proxy/tasks"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Options configure a Trunk. A nil *Options is valid.
type Options struct {
	// Logger receives the trunk's records; nil discards them.
	Logger *slog.Logger
	// Version is reported as serverInfo.version and to upstreams.
	Version string
	// Restart is how upstreams that go away are restarted; the zero value
	// leaves them failed (right for one-shot commands, wrong for serve).
	Restart upstream.RestartPolicy
	// PageSize bounds the items in one page of a list sent to the host;
	// 0 means DefaultPageSize, a negative value means no paging.
	PageSize int
	// RecordPins lets the trunk record, in warn mode, a server it sees for
	// the first time (trust on first use). Right for serve; one-shot
	// commands only compare.
	RecordPins bool
	// Observers are told of every host request and its outcome (audit,
	// metrics, traces); none costs nothing.
	Observers []observe.Observer
	// Dial connects the upstreams (upstream.Options.Dial); nil starts
	// each as its config says. Tests give in-memory servers this way.
	Dial upstream.Dialer
	// SigningKey is the secret the tokens the trunk hands hosts (task ids,
	// request states) are signed under, shared by the replicas of one
	// deployment (trunk.http.signingKeyFile) so that each opens the others';
	// nil signs with a key of this process.
	SigningKey []byte
	// Profile is the stdio host's profile (serve --profile): the trunk
	// shows it that view (trunk.profiles); "" shows everything.
	Profile string
	// ExactHostPrefix says the config's name budget was fitted to the
	// prefix the host puts before the trunk's names, as the operator gave
	// it (serve --host-prefix): the trunk then names nothing after the
	// host's clientInfo (Session.fitNames).
	ExactHostPrefix bool
	// Limits say where trunk.limits' counts are kept: nil keeps them in
	// this process; a shared store holds each limit across the replicas
	// that share it.
	Limits *limits.Options
	// State keeps callers' sign-ins and exchanged tokens (trunk.state,
	// opened by the command); nil keeps them in memory.
	State *statestore.Store
	// RunProgram runs code mode's programs; nil runs each in a runner
	// process (child.Run). Tests run them in process (codemode.Local).
	RunProgram func(ctx context.Context, code string, o child.Options) (child.Result, error)
}

// DefaultPageSize is the most items one list page carries. Hosts that
// follow cursors get large catalogs in pieces; it is high enough that most
// setups fit in one page.
const DefaultPageSize = 1000

// Trunk aggregates the configured upstreams: it starts them, keeps the
// namespaced catalog, and routes requests to their owners. It does not know
// how the host is connected; see Session for a host's connection.
type Trunk struct {
	// fixed at creation
	logger       *slog.Logger
	version      string
	pageSize     int
	stdioProfile string
	restart      upstream.RestartPolicy
	dial         upstream.Dialer // Options.Dial
	kick         chan struct{}   // a server changed: rebuild the catalog
	stopped      chan struct{}   // closed by Close: stops the announcer
	life         context.Context // ends at Close: work the trunk starts on its own
	stopLife     context.CancelFunc
	toResync     *relay.Resync      // what upstreams must be told again after a restart
	hosts        *hostSet           // the host sessions attached (hosts.go)
	subs         relay.Shares       // shares of upstream resource subscriptions (shared.go)
	parked       *translate.Parking // stateless hosts' calls to 2025 upstreams, between rounds
	taskIDs      *translate.TaskIDs // the ids of the servers' tasks as hosts get them (tasks.go)
	taskLog      *tasks.Ledger      // the tasks running, for status and observers (tasks.go)
	kept         *keptResults       // the wholes of tool results cut to their budget (kept.go)
	observers    observe.Observers
	creds        *usercreds.Broker        // servers' per-user credentials
	signIn       *signin.Manager          // their callers' own sign-ins (credentials mode "oauth")
	store        *statestore.Store        // trunk.state; nil: in memory
	own          instances.Pool[*Session] // sessions' own instances of "scope": "session" servers (private.go)
	perUser      instances.Pool[string]   // callers' own instances of servers with per-user credentials

	exactHostPrefix bool                                                                          // Options.ExactHostPrefix: names are not fitted by clientInfo (Trunk.hostBudget)
	runProgram      func(ctx context.Context, code string, o child.Options) (child.Result, error) // Options.RunProgram, child.Run when nil
	codeRuns        runGate                                                                       // the code-mode runs at once (coderuns.go)

	startOnce sync.Once
	started   chan struct{} // closed once host is set
	fleet     *upstream.Fleet
	startedAt time.Time
	workers   workgroup.Group // the trunk's own goroutines (start, announcer, resync, task watches, parked calls), refused once Close began

	// state is the generation in force (config, rules, pins, catalog):
	// the first, then each reload's, replaced whole. A request reads the
	// one it started with.
	state    atomic.Pointer[state]
	reloadMu sync.Mutex    // serialises Reload
	changes  atomic.Uint64 // counts server changes: a generation's catalog including fewer is rebuilt

	reported sync.Map        // unmatched-pattern messages already logged
	limiter  *limits.Limiter // trunk.limits: configured anew at each reload, counts kept
	record   bool            // Options.RecordPins
	dropped  atomic.Int64    // notifications to the host dropped for its message limit
	// unowned counts shared servers' notifications no session could be
	// told they concern; unownedFrom holds the servers already logged.
	unowned     atomic.Int64
	unownedFrom sync.Map

	levelMu     sync.Mutex // serialises applySharedLevel
	sharedLevel string     // the level the upstreams were last told in shared mode

	announceMu sync.Mutex
	seen       [catalog.ListCount]*catalog.Catalog // the catalog each list was last served or announced from
	closeOnce  sync.Once
}

// New returns a Trunk for cfg. Nothing starts until Start.
func New(cfg *config.Config, opts *Options) *Trunk {
	if opts == nil {
		opts = &Options{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pageSize := opts.PageSize
	if pageSize == 0 {
		pageSize = DefaultPageSize
	}
	t := &Trunk{
		logger:   logger,
		version:  opts.Version,
		pageSize: pageSize,
		restart:  opts.Restart,
		dial:     opts.Dial,
		kick:     make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		toResync: relay.NewResync(),
		hosts:    newHostSet(),
		started:  make(chan struct{}),
		kept:     newKeptResults(),
	}
	t.life, t.stopLife = context.WithCancel(context.Background())
	t.parked = translate.NewParking(t.life, t.workers.Go, opts.SigningKey)
	t.taskIDs = translate.NewTaskIDs(opts.SigningKey)
	t.record = opts.RecordPins
	t.state.Store(newState(t, cfg, catalog.NewPinner(cfg.Trunk, t.record, logger)))
	t.observers = opts.Observers
	t.taskLog = tasks.NewLedger(t.observers)
	t.limiter = limits.New(cfg.Trunk.Limits, opts.Limits)
	t.stdioProfile = opts.Profile
	t.exactHostPrefix = opts.ExactHostPrefix
	t.runProgram = opts.RunProgram
	if t.runProgram == nil {
		t.runProgram = child.Run
	}
	t.store = opts.State
	t.signIn = signin.New(signin.Options{Logger: logger, Store: opts.State})
	t.signIn.Configure(cfg)
	t.creds = usercreds.New(usercreds.Options{Logger: logger, OAuth: t.signIn, Store: opts.State})
	t.creds.Configure(cfg.Servers)
	t.initPools()
	return t
}

// StateStore is the store of trunk.state the trunk was made with (nil:
// its state is in memory).
func (t *Trunk) StateStore() *statestore.Store { return t.store }

// SignIn serves the callers' sign-ins to servers (/oauth/ on the listener).
func (t *Trunk) SignIn() *signin.Manager { return t.signIn }

// Start starts every configured upstream in the background, announcing
// clientCaps (the host's capabilities, filtered) to them. hostRevision is
// the revision the host speaks ("" when there is no host, as for the
// one-shot commands): with a 2025 host, servers that speak both
// revisions are spoken to at the 2025 one (upstream.Options.Prefer2025).
// Only the first call does anything.
func (t *Trunk) Start(clientCaps json.RawMessage, hostRevision string) {
	t.startOnce.Do(func() {
		cfg := t.state.Load().cfg
		t.fleet = upstream.NewFleet(&upstream.Options{
			Logger:          t.logger,
			Concurrency:     cfg.Trunk.Concurrency,
			MaxMessageBytes: cfg.Trunk.MaxMessageBytes,
			Version:         t.version,
			Capabilities:    clientCaps,
			Restart:         t.restart,
			Dial:            t.dial,
			Prefer2025:      hostRevision != "" && !protocol.IsStateless(hostRevision),
			Authorization:   t.creds.Catalog,
			Events: upstream.Events{
				Changed:      t.serverChanged,
				Notification: t.forwardNotification,
				Request:      t.forwardRequest,
				KeepAwake:    t.taskLog.Runs,
			},
		})
		t.startedAt = time.Now()
		close(t.started)
		t.workers.Go(t.watchLock)
		t.workers.Go(func() {
			if err := t.fleet.StartAll(context.Background(), cfg.Servers); err != nil {
				t.logger.Warn("some servers did not start", "error", err)
			}
			t.serverChanged("")
		})
		t.workers.Go(t.announce)
	})
}

// Fleet returns the set of upstreams, waiting for Start to have been called.
func (t *Trunk) Fleet() *upstream.Fleet {
	<-t.started
	return t.fleet
}

// Started is closed once Start has been called (Fleet no longer waits).
func (t *Trunk) Started() <-chan struct{} { return t.started }

// clients returns the upstreams, or none before Start.
func (t *Trunk) clients() []*upstream.Client {
	select {
	case <-t.started:
		return t.fleet.Clients()
	default:
		return nil
	}
}

// WaitSettled waits until every upstream has started or failed, or until the
// config's startupWait has passed since Start, or ctx ends.
func (t *Trunk) WaitSettled(ctx context.Context) {
	select {
	case <-t.started:
	case <-ctx.Done():
		return
	}
	startupWait := t.state.Load().cfg.Trunk.StartupWait.D()
	wait := startupWait - time.Since(t.startedAt)
	if wait <= 0 {
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.fleet.Settled():
	case <-timer.C:
		t.logger.Warn("answering before every server is up; late ones will follow with list_changed",
			"startupWait", startupWait)
	case <-ctx.Done():
	}
}

// serverChanged marks the catalog stale and wakes the announcer.
func (t *Trunk) serverChanged(string) {
	t.changes.Add(1)
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// snapshot is the catalog of the generation in force (state.catalog), for
// what the trunk does outside a request: a request reads its own
// generation's.
func (t *Trunk) snapshot() *catalog.Catalog { return t.state.Load().catalog() }

// build makes st's catalog from the servers as they are now, under st's
// policy and pins, and reports each filter pattern that matches nothing
// once.
func (t *Trunk) build(st *state) *catalog.Catalog {
	cat := trunktools.Catalog(t.clients(), st.policy(), st.pins, t.logger)
	for _, msg := range cat.Unmatched {
		if _, seen := t.reported.LoadOrStore(msg, true); !seen {
			t.logger.Warn(msg)
		}
	}
	return cat
}

// Close shuts every upstream down and stops the trunk's goroutines.
// Idempotent.
func (t *Trunk) Close(ctx context.Context) error {
	var err error
	t.closeOnce.Do(func() {
		t.startOnce.Do(func() {}) // a Start after Close does nothing
		close(t.stopped)
		t.stopLife()
		t.parked.CloseAll()
		t.perUser.Close()
		t.creds.Close() // after the pool: the deletes its closes started
		t.own.Close()
		select {
		case <-t.started:
			err = t.fleet.Close(ctx)
		default:
		}
		t.workers.Close()
		t.taskLog.Close() // after the workers: a task they followed has ended by now, or never will
	})
	return err
}

// lockPoll is how often a serving trunk looks at the lockfile.
const lockPoll = time.Second

// watchLock rebuilds the catalog when the lockfile changes: what a
// "mcptrunk pin" run trusted reaches the host (with list_changed) without a
// restart, and an edit that breaks the file takes effect in enforce mode.
func (t *Trunk) watchLock() {
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		select {
		case <-t.stopped:
			return
		case <-tick.C:
			if p := t.state.Load().pins; !p.Off() && p.LockChanged() {
				t.serverChanged("")
			}
		}
	}
}
