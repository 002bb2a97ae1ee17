// Package peers runs other aggregating MCP proxies ("peers") in front of the
// same upstream as mcptrunk, so that `mcptrunk-bench -only peers` can measure
// them side by side with the same client, server and workload in one run,
// and prints the side-by-side table.
//
// A peer is installed outside the module (npm into testdata/npm-peers, Go
// binaries with `go install` into a GOBIN of one's choosing), never by
// `make test`: an install can fail, and a peer that is not there is skipped
// with a message that says how to install it. Every peer proxies go-sdk's
// conformance server over streamable HTTP, the upstream of the bench's http
// workload, so that the direct and httputil.ReverseProxy sides are the same
// yardsticks for all.
//
// This package starts and stops peers and summarises samples; the calls
// themselves are made by the bench's own measuring code, as for every other
// side.
package peers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// Env is what starting a peer needs to know.
type Env struct {
	// Dir is a temporary directory for configs and a peer's state (its HOME).
	Dir string
	// Upstream is the conformance server's MCP endpoint, http://HOST:PORT/mcp.
	Upstream string
	// NPM is the node_modules that testdata/npm-peers installs into.
	NPM string
	// Bin is where Go peers were installed (GOBIN); empty: look in PATH.
	Bin string
}

// Peer is one aggregating proxy the bench knows how to run.
type Peer struct {
	// Name is how the table names it, with the pinned version.
	Name string
	// Install says how to install it, for the message when it is missing.
	Install string
	// find returns the command that runs it, or why it cannot be run.
	find func(Env) ([]string, error)
	// start runs it in front of env.Upstream and waits until it serves.
	start func(ctx context.Context, env Env, argv []string) (*Running, error)
}

// All is every peer the bench can run, in the table's order.
var All = []Peer{mcpHub, toolHive}

// Start runs the peer, or says why it is skipped (a *SkipError when it is
// not installed; any other error means it is installed but failed).
func (p Peer) Start(ctx context.Context, env Env) (*Running, error) {
	// Peers run in env.Dir: paths given relative to here must not move.
	for _, path := range []*string{&env.NPM, &env.Bin} {
		if abs, err := filepath.Abs(*path); err == nil && *path != "" {
			*path = abs
		}
	}
	argv, err := p.find(env)
	if err != nil {
		return nil, &SkipError{Peer: p.Name, Reason: err.Error(), Install: p.Install}
	}
	r, err := p.start(ctx, env, argv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	r.Name = p.Name
	return r, nil
}

// SkipError is a peer that is not installed here.
type SkipError struct{ Peer, Reason, Install string }

func (e *SkipError) Error() string {
	return fmt.Sprintf("skipping %s: %s (install: %s)", e.Peer, e.Reason, e.Install)
}

// Running is a started peer.
type Running struct {
	Name string
	// Note says which upstream and transports it runs with, for the table.
	Note string
	// URL is the endpoint the host connects to.
	URL string
	// SSE: the host side is the 2024-11-05 HTTP+SSE transport, not
	// streamable HTTP.
	SSE bool
	// Tool is the conformance server's test_simple_text as the peer names it.
	Tool string
	p    *process
}

// Transport is how a go-sdk client reaches the peer.
func (r *Running) Transport() mcp.Transport {
	if r.SSE {
		return &mcp.SSEClientTransport{Endpoint: r.URL}
	}
	return &mcp.StreamableClientTransport{Endpoint: r.URL, MaxRetries: -1}
}

// Stop ends the peer's process.
func (r *Running) Stop() { r.p.stop() }

// process is a peer's process with what it printed, for errors.
type process struct {
	cmd    *exec.Cmd
	out    *testkit.Buffer
	exited chan struct{}
}

func startProcess(argv []string, env Env) (*process, error) {
	p := &process{cmd: exec.Command(argv[0], argv[1:]...), out: &testkit.Buffer{}, exited: make(chan struct{})}
	// A peer's own state (logs, caches, workspace files) goes to Dir, not
	// to the user's home.
	p.cmd.Env = append(os.Environ(), "HOME="+env.Dir, "XDG_STATE_HOME="+filepath.Join(env.Dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(env.Dir, "config"), "XDG_CACHE_HOME="+filepath.Join(env.Dir, "cache"))
	p.cmd.Dir = env.Dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// waitReady polls ready until it says yes, the process exits, or 60 s pass
// (a peer on npm starts a node process; a loaded machine is slow).
func (p *process) waitReady(ctx context.Context, ready func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := ready(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited before it was ready: %s", tail(p.out.String()))
		case <-ctx.Done():
			p.stop()
			return fmt.Errorf("not ready: %v; it printed: %s", errors.Join(ctx.Err(), last), tail(p.out.String()))
		case <-tick.C:
		}
	}
}

// tail is the end of what a process printed, enough to see why it failed,
// on one line (it is an item of a Markdown list).
func tail(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1500 {
		s = "..." + s[len(s)-1500:]
	}
	return s
}

// freeAddr is a loopback address with a port free right now, for peers
// that must be told their port (none of them takes port 0).
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// lookBin finds a Go peer's binary in env.Bin, else in PATH.
func lookBin(env Env, name string) (string, error) {
	if env.Bin != "" {
		path := filepath.Join(env.Bin, name)
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("%s is not in %s", name, env.Bin)
		}
		return path, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not in PATH (or give -peers-bin)", name)
	}
	return path, nil
}

// StartAll starts every peer of All and connects to each with connect (the
// bench's own client, as for every other side). It returns those that run;
// each that does not is in skipped, with why: not installed, or installed
// and failed here (the reason is the result for that peer).
func StartAll(ctx context.Context, env Env, connect func(*Running) error) (running []*Running, skipped []string) {
	for _, p := range All {
		r, err := p.Start(ctx, env)
		if err == nil {
			if err = connect(r); err != nil {
				r.Stop()
				err = fmt.Errorf("%s: connecting: %w", p.Name, err)
			}
		}
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		running = append(running, r)
	}
	return running, skipped
}
