package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// conformanceServerPkg is go-sdk's conformance everything-server (a Go SDK
// server with every feature, the stdio and HTTP upstream of the protocol
// and conformance tests), at the go-sdk version go.mod pins.
const conformanceServerPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

var conformance struct {
	once sync.Once
	path string
	err  error
}

// ConformanceServer builds go-sdk's conformance everything-server into dir
// the first time a test binary asks, and returns its path: later calls
// return the first build whatever their dir, so a package's tests build it
// once. dir outlives the tests that run it (a directory the test binary
// removes when it ends, not a t.TempDir).
func ConformanceServer(dir string) (string, error) {
	conformance.once.Do(func() {
		root, err := ModuleRoot()
		if err != nil {
			conformance.err = err
			return
		}
		path := filepath.Join(dir, "everything-server")
		if err := GoBuild(root, "-o", path, conformanceServerPkg); err != nil {
			conformance.err = fmt.Errorf("building go-sdk's conformance everything-server: %w", err)
			return
		}
		conformance.path = path
	})
	return conformance.path, conformance.err
}

// ConformanceHTTP is go-sdk's conformance everything-server serving
// streamable HTTP on a loopback port.
type ConformanceHTTP struct {
	// URL is its MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// Out is what it printed (stdout and stderr).
	Out *Buffer
	// Exited is closed once the process has exited.
	Exited <-chan struct{}

	cmd *exec.Cmd
}

// StartConformanceHTTP runs bin (ConformanceServer's build) over
// streamable HTTP on a free loopback port with flags (say
// "-stateless=false") and env added to its environment, and returns once it
// accepts connections: the one way the tests, of this module's packages and
// of mcptrunk-bench, run it over HTTP. The server prints no address it
// chose, so the port is picked here. Stop ends it.
func StartConformanceHTTP(ctx context.Context, bin string, env []string, flags ...string) (*ConformanceHTTP, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	s := &ConformanceHTTP{URL: "http://" + addr + "/mcp", Out: &Buffer{}}
	s.cmd = exec.Command(bin, append([]string{"-http", addr}, flags...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.Out, s.Out
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the conformance server: %w", err)
	}
	exited := make(chan struct{})
	s.Exited = exited
	go func() {
		_ = s.cmd.Wait()
		close(exited)
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("the conformance server exited before listening on %s:\n%s", addr, s.Out)
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("the conformance server never listened on %s: %v\n%s", addr, err, s.Out)
		case <-tick.C:
		}
	}
}

// Stop kills the server and waits for it. It may be called more than once.
func (s *ConformanceHTTP) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.Exited
}
