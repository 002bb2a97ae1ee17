package testkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// A node MCP server from npm serving HTTP, bound to 127.0.0.1 on a port of
// its own choosing: above all the reference server of the MCP project
// (@modelcontextprotocol/server-everything, a TypeScript SDK server) in its
// streamableHttp or sse mode, the remote server the tests of the HTTP
// transports and of mcptrunk connect talk to; also the example app servers
// a browser reaches directly.

// everythingLoopback is preloaded into node: it makes every listen bind
// 127.0.0.1 (the server binds all interfaces otherwise) and reports the
// port it got.
const everythingLoopback = `
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (typeof args[1] === 'string') args[1] = '127.0.0.1'; else args.splice(1, 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object') {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
  }
  this.once('listening', () => {
    const a = this.address();
    process.stderr.write('MCPTRUNK_LISTENING ' + a.address + ' ' + a.port + '\n');
  });
  return listen.apply(this, args);
};
`

// Everything is one running server-everything process.
type Everything = NodeServer

// NodeServer is one running node server.
type NodeServer struct {
	// Port is the port it listens on, on 127.0.0.1.
	Port string
	// Out is what it printed (stdout and stderr).
	Out *Buffer

	cmd *exec.Cmd
	wg  sync.WaitGroup
}

// EverythingIndex is the server's entry point under modules (NPMModules).
func EverythingIndex(modules string) string {
	return filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// StartEverything starts node on index in mode ("streamableHttp" or "sse")
// on port ("0": any free one), and waits until it listens. dir is where
// the loopback preload is written (a test's temporary directory).
func StartEverything(node, index, mode, port, dir string) (*Everything, error) {
	return StartNodeServer(node, []string{index, mode}, port, dir)
}

// nodeStartWait bounds the wait for a node server to listen, for one that
// neither listens nor exits. It is not how long starting may take: node
// loading a server's modules took over 30 s on a starved machine (load 20,
// nice 19), so a shorter bound failed servers that were starting.
const nodeStartWait = 3 * time.Minute

// StartNodeServer starts node with args (the script first) and PORT=port
// ("0": any free one), bound to 127.0.0.1, and waits until it listens, or
// until it exits (its stderr closes) without listening, which is an error
// with what it printed. dir is where the loopback preload is written (a
// test's temporary directory).
func StartNodeServer(node string, args []string, port, dir string) (*NodeServer, error) {
	preload := filepath.Join(dir, "loopback.cjs")
	if err := os.WriteFile(preload, []byte(everythingLoopback), 0o644); err != nil {
		return nil, err
	}
	s := &NodeServer{Out: &Buffer{}}
	s.cmd = exec.Command(node, append([]string{"--require", preload}, args...)...)
	s.cmd.Env = append(os.Environ(), "PORT="+port)
	s.cmd.Stdout = s.Out
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(args[0]), err)
	}
	ports := make(chan string, 1)
	exited := make(chan struct{}) // stderr closed: the server is gone
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(exited)
		re := regexp.MustCompile(`^MCPTRUNK_LISTENING (\S+) (\d+)$`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := re.FindStringSubmatch(line); m != nil {
				if m[1] != "127.0.0.1" {
					fmt.Fprintf(s.Out, "listening on %s, not loopback!\n", m[1])
					continue
				}
				select {
				case ports <- m[2]:
				default:
				}
				continue
			}
			fmt.Fprintln(s.Out, line)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	timer := time.NewTimer(nodeStartWait)
	defer timer.Stop()
	select {
	case s.Port = <-ports:
		return s, nil
	case <-exited:
		select {
		case s.Port = <-ports: // it listened, then closed its stderr
			return s, nil
		default:
		}
		s.Stop()
		return nil, fmt.Errorf("%s exited without listening on 127.0.0.1:\n%s", args, s.Out)
	case <-timer.C:
		s.Stop()
		return nil, fmt.Errorf("%s did not start listening on 127.0.0.1 within %s:\n%s", args, nodeStartWait, s.Out)
	}
}

// Stop kills the server and waits for it.
func (s *NodeServer) Stop() {
	_ = s.cmd.Process.Kill()
	s.wg.Wait()
	_ = s.cmd.Wait()
}
