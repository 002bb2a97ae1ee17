package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// Shutdown grace periods for a stdio server: first it is asked to exit by
// closing its stdin, then told with SIGTERM, then killed with its process
// group. Variables so tests can shorten them.
var (
	StdinGrace = 2 * time.Second
	TermGrace  = 2 * time.Second
	// OutputGrace is how long the reader keeps going after the process exited,
	// for output still in the pipe; a grandchild that inherited stdout cannot
	// keep the connection open past it.
	OutputGrace = 500 * time.Millisecond
)

// Transport owns one server subprocess and the JSON-RPC connection over
// its stdin and stdout. Its stderr goes to the log and to a tail kept for
// failure reports.
type Transport struct {
	// fixed at creation
	conn    *jsonrpc.Conn
	cmd     *exec.Cmd
	group   *processGroup
	stdin   *os.File
	stdout  *os.File
	stderr  *os.File
	tail    *stderrTail
	exited  chan struct{} // closed when cmd.Wait has returned
	drained chan struct{} // closed when the stderr drain has returned
	done    chan struct{} // closed when the connection and the process are both gone
	workers sync.WaitGroup
	logger  *slog.Logger

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	waitErr error // the process's exit status, once exited is closed
}

// Command is the process of a stdio server: what the transport needs of
// its config entry, and nothing else.
type Command struct {
	Path string            // the program (looked up in PATH when it has no directory)
	Args []string          // its arguments
	Env  map[string]string // merged over the trunk's own environment
	Dir  string            // its working directory; "" is the trunk's
}

// Start starts c in its own process group and connects to it with a Conn
// made with connOpts (its Logger is logger). The process is not tied to a
// context: it lives until Close.
func Start(c Command, h jsonrpc.Handler, logger *slog.Logger, connOpts jsonrpc.Options) (*Transport, error) {
	env := mergeEnv(os.Environ(), c.Env)
	cmd, err := command(c.Path, c.Args, env, c.Dir)
	if err != nil {
		return nil, startError(c.Path, env, err)
	}
	group, err := newProcessGroup()
	if err != nil {
		return nil, fmt.Errorf("starting %q: %w", c.Path, err)
	}

	// Plain pipes rather than cmd.StdoutPipe: exec's pipes are closed by Wait,
	// which could cut off the last response of a server that answers and
	// exits. We close our ends ourselves.
	childIn, stdin, err := os.Pipe()
	if err != nil {
		group.close()
		return nil, fmt.Errorf("creating stdin pipe: %w", err)
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		group.close()
		closeAll(childIn, stdin)
		return nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	stderr, childErr, err := os.Pipe()
	if err != nil {
		group.close()
		closeAll(childIn, stdin, stdout, childOut)
		return nil, fmt.Errorf("creating stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, childErr
	if err := cmd.Start(); err != nil {
		group.close()
		closeAll(childIn, stdin, stdout, childOut, stderr, childErr)
		return nil, startError(c.Path, env, err)
	}
	closeAll(childIn, childOut, childErr) // the child has its own copies
	if err := group.add(cmd.Process); err != nil {
		// The server works; only the guarantee that its tree dies with
		// the trunk is lost, so it runs rather than fails.
		logger.Warn("server's children may outlive the trunk", logkey.Error, err)
	}

	t := &Transport{
		cmd:     cmd,
		group:   group,
		stdin:   stdin,
		stdout:  stdout,
		stderr:  stderr,
		tail:    newStderrTail(),
		exited:  make(chan struct{}),
		drained: make(chan struct{}),
		done:    make(chan struct{}),
		logger:  logger,
	}
	connOpts.Logger = logger
	connOpts.Redact = redact(envSecrets(c.Env))
	t.conn = jsonrpc.NewConn(jsonrpc.NewLineReader(stdout), jsonrpc.NewLineWriter(stdin), h, &connOpts)
	t.workers.Add(3)
	go func() {
		defer t.workers.Done()
		if err := t.conn.Serve(); err != nil {
			logger.Debug("reading from server ended", "error", err)
			var over *jsonrpc.OverlongLineError
			if errors.As(err, &over) {
				// Its output will never come back to a message: stop it,
				// for the supervisor to start it again.
				logger.Warn("the server writes a line without end; stopping it", "bytes", over.Size, "limit", over.Limit)
				if err := group.kill(); err != nil {
					logger.Debug("killing server", "error", err)
				}
			}
		}
	}()
	go func() {
		defer t.workers.Done()
		defer close(t.drained)
		drainStderr(stderr, logger, t.tail)
	}()
	go func() {
		defer t.workers.Done()
		t.wait()
	}()
	return t, nil
}

// wait reaps the process, then makes sure the reader and the stderr drain
// end even when a grandchild still holds the pipes. Done closes only once
// the drain has returned, so Err's stderr tail ends with the last line the
// server wrote.
func (t *Transport) wait() {
	awaitExit(t.cmd.Process.Pid)
	err := t.cmd.Wait()
	t.mu.Lock()
	t.waitErr = err
	t.mu.Unlock()
	close(t.exited)
	grace := time.NewTimer(OutputGrace)
	defer grace.Stop()
	select {
	case <-t.conn.Done():
		select {
		case <-t.drained:
		case <-grace.C:
		}
	case <-grace.C:
		_ = t.stdout.Close()
	}
	<-t.conn.Done()
	_ = t.stderr.Close()
	<-t.drained
	close(t.done)
}

func (t *Transport) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return t.conn.Call(ctx, method, params)
}

// CallWithin is Call bounded by d without a context of its own
// (jsonrpc.Conn.CallWithin).
func (t *Transport) CallWithin(ctx context.Context, d time.Duration, method string, params json.RawMessage) (json.RawMessage, error) {
	return t.conn.CallWithin(ctx, d, method, params)
}

func (t *Transport) Notify(method string, params json.RawMessage) error {
	return t.conn.Notify(method, params)
}

func (t *Transport) Done() <-chan struct{} { return t.done }

// Err describes how the server went away: its exit status and the last
// lines it wrote to stderr.
func (t *Transport) Err() error {
	select {
	case <-t.exited:
	default:
		return t.conn.Err()
	}
	t.mu.Lock()
	err := t.waitErr
	t.mu.Unlock()
	msg := "process exited"
	if err != nil {
		msg = "process " + err.Error()
	}
	var over *jsonrpc.OverlongLineError
	if errors.As(t.conn.Err(), &over) {
		msg = over.Error() + "; " + msg
	}
	if tail := t.tail.String(); tail != "" {
		msg += "; last stderr: " + tail
	}
	return errors.New(msg)
}

// StderrTail returns the last lines the server wrote to stderr.
func (t *Transport) StderrTail() string { return t.tail.String() }

// Close shuts the server down in order: close its stdin and let it exit;
// after stdinGrace send SIGTERM to its process group; after termGrace kill
// the group. It waits for every goroutine the transport started. ctx ending
// skips straight to the kill. Idempotent and safe to call concurrently.
func (t *Transport) Close(ctx context.Context) error {
	t.closeOnce.Do(func() {
		_ = t.stdin.Close()
		if !t.awaitExit(ctx, StdinGrace) {
			t.logger.Debug("server ignored stdin EOF; terminating it")
			if err := t.group.terminate(); err != nil {
				t.logger.Debug("terminating server", "error", err)
			}
			if !t.awaitExit(ctx, TermGrace) {
				t.logger.Warn("server ignored SIGTERM; killing its process group")
				t.closeErr = t.group.kill()
				<-t.exited
			}
		}
		// The group may hold children that outlived the leader.
		_ = t.group.kill()
		t.workers.Wait()
		t.group.close()
	})
	return t.closeErr
}

// awaitExit waits up to grace for the process to exit; false when it did not
// or ctx ended first.
func (t *Transport) awaitExit(ctx context.Context, grace time.Duration) bool {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-t.exited:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// mergeEnv returns base with overrides applied; overrides win.
func mergeEnv(base []string, overrides map[string]string) []string {
	if len(overrides) == 0 {
		return base
	}
	replaced := make(map[string]bool, len(overrides))
	for k := range overrides {
		replaced[envKey(k)] = true
	}
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range base {
		key, _, _ := strings.Cut(kv, "=")
		if key != "" && replaced[envKey(key)] {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range overrides {
		out = append(out, k+"="+v)
	}
	return out
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
