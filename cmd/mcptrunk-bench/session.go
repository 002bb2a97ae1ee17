package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// endpoint is one go-sdk client session, to the notes server directly or to
// a trunk in front of notes servers, with what the workloads need to address
// it: the tool names as this side exports them, and the pid whose /proc
// entry says how much memory the side under test uses.
type endpoint struct {
	side  string // "direct" or "trunk"
	cs    *mcp.ClientSession
	pid   int    // the process measured: notes (direct) or mcptrunk (trunk); the reverse proxy (relay) in the http workload
	echo  string // "echo" or "mcp__notes__echo"
	fixed bool   // echo is a tool without arguments whose answer is fixed (not an echo)
	blob  string
	close func() error
}

// Close ends the session; the process exits on stdin EOF.
func (e *endpoint) Close() error { return e.close() }

// server is one upstream in a trunk config.
type server struct {
	name string
	args []string
}

// launcher starts the two sides of every comparison.
type launcher struct {
	trunkBin, notesBin string
	dir                string // temporary configs
	// profile, when set, replaces bin/mcptrunk with this binary serving a
	// trunk (serve-trunk) that writes CPU and allocation profiles to
	// profile[.N].{cpu,allocs}.pprof.
	profile string
	// trunkArgs are added to `mcptrunk serve`'s own.
	trunkArgs []string
	configs   int
	trunks    int
}

func newLauncher(trunkBin, notesBin, profile string) (*launcher, error) {
	var err error
	l := &launcher{profile: profile}
	if l.trunkBin, err = filepath.Abs(trunkBin); err != nil {
		return nil, err
	}
	if l.notesBin, err = filepath.Abs(notesBin); err != nil {
		return nil, err
	}
	for _, bin := range []string{l.notesBin, l.trunkBin} {
		if bin == l.trunkBin && profile != "" {
			continue
		}
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%w (run `make build` first)", err)
		}
	}
	if l.dir, err = os.MkdirTemp("", "mcptrunk-bench-"); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *launcher) cleanup() { _ = os.RemoveAll(l.dir) }

// clientOptions declares no capabilities: no roots, sampling or elicitation,
// so neither side has anything to forward.
func clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcptrunk-bench", Version: "0"}, clientOptions())
}

// protocol pins both sides to one revision (-revision): the direct side
// and the trunk must do the same work. At 2026-07-28 the go-sdk client adds
// _meta to every request and caches list results, on both sides alike.
var protocol = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// connectCmd runs cmd and connects a go-sdk client to it over its stdio.
// Normally that is mcp.CommandTransport. go-sdk's CommandTransport refuses
// lines over 16 MB (mcp.DefaultMaxLineLength) and has no setting to raise
// it, so bigLines builds the same pipes by hand under mcp.IOTransport with
// the limit lifted: needed for the 20 MB result.
func connectCmd(ctx context.Context, cmd *exec.Cmd, bigLines bool) (*mcp.ClientSession, error) {
	if !bigLines {
		return newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, protocol)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	cs, err := newClient().Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: -1}, protocol)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	return cs, nil
}

// closeCmd closes a session and reaps its process, killing it if it does
// not exit on stdin EOF within a few seconds.
func closeCmd(cs *mcp.ClientSession, cmd *exec.Cmd, bigLines bool) error {
	err := cs.Close() // CommandTransport: closes stdin and waits for the exit
	if !bigLines {
		return ignoreExit(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case werr := <-done:
		return errors.Join(ignoreExit(err), ignoreExit(werr))
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("%s did not exit on stdin EOF", cmd.Path)
	}
}

// ignoreExit drops the errors a normal shutdown produces.
func ignoreExit(err error) error {
	var exit *exec.ExitError
	if err == nil || errors.As(err, &exit) || errors.Is(err, os.ErrClosed) || strings.Contains(err.Error(), "file already closed") {
		return nil
	}
	return err
}

// direct starts one notes server and connects to it.
func (l *launcher) direct(ctx context.Context, bigLines bool, args ...string) (*endpoint, error) {
	cmd := exec.Command(l.notesBin, args...)
	cs, err := connectCmd(ctx, cmd, bigLines)
	if err != nil {
		return nil, fmt.Errorf("connecting to notes directly: %w", err)
	}
	return &endpoint{
		side: "direct", cs: cs, pid: cmd.Process.Pid, echo: "echo", blob: "blob",
		close: func() error { return closeCmd(cs, cmd, bigLines) },
	}, nil
}

// trunkOptions is the config's "trunk" object; nil keeps every default.
type trunkOptions map[string]any

// writeConfig writes a trunk config listing servers, all running the notes
// binary, and returns its path.
func (l *launcher) writeConfig(servers []server, opts trunkOptions) (string, error) {
	type spec struct {
		Command string   `json:"command"`
		Args    []string `json:"args,omitempty"`
	}
	cfg := struct {
		Servers map[string]spec `json:"mcpServers"`
		Trunk   trunkOptions    `json:"trunk,omitempty"`
	}{Servers: map[string]spec{}, Trunk: opts}
	for _, s := range servers {
		cfg.Servers[s.name] = spec{Command: l.notesBin, Args: s.args}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	l.configs++
	path := filepath.Join(l.dir, fmt.Sprintf("mcptrunk-%d.json", l.configs))
	return path, os.WriteFile(path, data, 0o644)
}

// trunk starts mcptrunk in front of servers and connects to it; the first
// server's echo and blob are the tools the workloads call.
func (l *launcher) trunk(ctx context.Context, bigLines bool, opts trunkOptions, servers ...server) (*endpoint, error) {
	path, err := l.writeConfig(servers, opts)
	if err != nil {
		return nil, err
	}
	e := &endpoint{side: "trunk", echo: "mcp__" + servers[0].name + "__echo", blob: "mcp__" + servers[0].name + "__blob"}
	cmd := exec.Command(l.trunkBin, append([]string{"serve", "--config", path, "--log-level", "warn"}, l.trunkArgs...)...)
	if l.profile != "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		l.trunks++
		suffix := ""
		if l.trunks > 1 {
			suffix = fmt.Sprintf(".%d", l.trunks)
		}
		cmd = exec.Command(self, serveTrunkCommand, "-config", path, "-profile", l.profile+suffix)
		cmd.Stderr = os.Stderr
	}
	cs, err := connectCmd(ctx, cmd, bigLines)
	if err != nil {
		return nil, fmt.Errorf("connecting to mcptrunk: %w", err)
	}
	e.cs, e.pid = cs, cmd.Process.Pid
	e.close = func() error { return closeCmd(cs, cmd, bigLines) }
	return e, nil
}

// inProcessTrunk is a trunk served by this process over two OS pipes, the
// way `mcptrunk serve` is served over its stdio. The growth workload uses
// it to count goroutines.
type inProcessTrunk struct {
	served chan error
}

// startInProcess loads the config at path and serves a trunk for it on
// pipes; it returns the client's ends of them.
func startInProcess(path string) (*inProcessTrunk, io.ReadCloser, io.WriteCloser, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = inR.Close()
		_ = inW.Close()
		return nil, nil, nil, err
	}
	t := proxy.New(cfg, &proxy.Options{Version: "bench", Restart: upstream.DefaultRestartPolicy})
	p := &inProcessTrunk{served: make(chan error, 1)}
	go func() {
		err := t.Serve(context.Background(), inR, outW)
		_ = inR.Close()
		_ = outW.Close()
		p.served <- err
	}()
	return p, outR, inW, nil
}

// wait waits for Serve to return after the host closed its end.
func (p *inProcessTrunk) wait() error {
	select {
	case err := <-p.served:
		return err
	case <-time.After(15 * time.Second):
		return errors.New("in-process trunk did not stop")
	}
}

// notesServers names n notes servers n01, n02, ... started with args.
func notesServers(n int, args ...string) []server {
	out := make([]server, n)
	for i := range out {
		out[i] = server{name: fmt.Sprintf("n%02d", i+1), args: args}
	}
	return out
}
