// Package audit is the audit log of issue 17: one JSON line per tool call,
// prompt get and resource read the host makes through the trunk, written by
// an observe.Observer. The log records what was asked of which server, by
// which host, how it ended and how big it was; arguments only when the
// config asks, with the values of keys that look secret redacted.
//
// Auditing must never cost the host a call: a line is handed to one writer
// goroutine through a bounded queue and never waited for, and a line that
// cannot be queued or written is dropped, counted (Dropped) and logged.
package audit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// SessionStdio is the session of the host on the trunk's stdio. There is
// one such host per process; the field is there so that a downstream with
// several sessions can tell them apart in the same file.
const SessionStdio = "stdio"

// Keep is how many rotated files are kept beside the log (file.1 newest).
const Keep = 3

// queueLen bounds the lines waiting for the writer: a disk that stalls
// makes lines drop, never requests wait.
const queueLen = 1024

// Options configure a Log.
type Options struct {
	config.Audit
	// Session fills the session of each line whose request names none
	// (observe.Request.Session: the stdio host's); SessionStdio when empty.
	Session string
	Logger  *slog.Logger
	// now is time.Now unless a test sets it.
	now func() time.Time
}

// Log is the audit log: an observe.Observer that writes a line for each
// audited request.
type Log struct {
	opts    Options
	logger  *slog.Logger
	file    *rotator
	queue   chan []byte
	done    chan struct{}
	dropped atomic.Int64

	mu     sync.RWMutex // held to send on queue; closed under its write lock
	closed bool

	failMu   sync.Mutex // the failure log's state, below
	failing  bool       // the last write failed
	lastWarn time.Time  // when a failure was last logged
	unlogged int64      // lines dropped since then
}

var _ observe.Observer = (*Log)(nil)

// New starts the log's writer. It does not fail when the file cannot be
// opened: that is a write failure like any other, logged and counted, and
// the file is tried again for the next line (a directory created, a disk
// remounted, and the log resumes).
func New(opts Options) *Log {
	if opts.Session == "" {
		opts.Session = SessionStdio
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = config.DefaultAuditMaxBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	l := &Log{
		opts:   opts,
		logger: opts.Logger.With("audit", opts.File),
		file:   &rotator{path: opts.File, maxBytes: int64(opts.MaxBytes), keep: Keep},
		queue:  make(chan []byte, queueLen),
		done:   make(chan struct{}),
	}
	if err := l.file.open(); err != nil {
		l.logger.Error("the audit log cannot be opened; its lines are dropped until it can", logkey.Error, err)
	}
	go l.write()
	return l
}

// Begin is the observe.Observer hook: a request that is audited gets an end
// function that queues its line; any other gets one that does nothing.
func (l *Log) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	if !audited(r.Method) {
		return ctx, func(observe.Outcome) {}
	}
	start := l.opts.now()
	return ctx, func(out observe.Outcome) {
		l.enqueue(l.line(start, r, out))
	}
}

// audited reports whether a method is one the log records: the requests
// that act through a server (lists, pings and the handshake do not), a
// task's included: the tools/call that made it, then what settles it: its
// result (2025-11-25 tasks/result), the input it was given (tasks/update)
// and its cancellation. Polls (tasks/get) are not recorded: a host may poll
// every few hundred milliseconds for minutes. (A task's own lines, at its
// creation and its end, are BeginTask's: tasks.go.)
func audited(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "tasks/result", "tasks/update", "tasks/cancel":
		return true
	}
	return false
}

// Dropped is how many lines were lost: not written (the file could not be
// opened, written or rotated), not queued (the writer was behind by
// queueLen lines), or ended after Close.
func (l *Log) Dropped() int64 { return l.dropped.Load() }

// Close writes the lines queued so far and closes the file. Requests that
// end later are dropped and counted.
func (l *Log) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.queue)
	}
	l.mu.Unlock()
	<-l.done
	return l.file.close()
}

func (l *Log) enqueue(line []byte) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	select {
	case l.queue <- line:
	default:
		l.fail(1, errQueueFull)
	}
}

// write is the writer goroutine: it writes the queued lines in order,
// until Close.
func (l *Log) write() {
	defer close(l.done)
	for line := range l.queue {
		if err := l.file.write(line); err != nil {
			l.fail(1, err)
		} else {
			l.recovered()
		}
	}
}
