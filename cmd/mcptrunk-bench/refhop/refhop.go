// Package refhop holds the reference hops mcptrunk-bench measures the trunk
// against: the thinnest process of each kind that can stand where the trunk
// stands. Each is a hidden subcommand of the benchmark binary, so that it is
// a process of its own as the trunk is.
package refhop

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"time"
)

// The subcommand names the benchmark binary dispatches on.
const (
	PipeEchoCommand     = "pipe-echo"
	ByteRelayCommand    = "byte-relay"
	ReverseProxyCommand = "reverse-proxy"
)

// PipeEcho copies each line from stdin back to stdout, and nothing else: one
// more process on a path at the least it can cost.
func PipeEcho(stdin io.Reader, stdout io.Writer) error {
	r := bufio.NewReader(stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := stdout.Write(line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// ByteRelay is the thinnest stdio hop there can be, the reference a stdio
// proxy is measured against. It starts args as a child and copies bytes both
// ways, reading nothing of them (no parsing, no routing, no rewriting): stdin
// to the child's stdin, and the child's stdout to stdout, each on a goroutine
// of its own. The answers pass through the relay as they pass through the
// trunk; a child writing straight to the relay's stdout would make the relay
// a one-way hop against the trunk's two-way one.
func ByteRelay(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("byte-relay: no command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	answers := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdout, childOut) // until the child closes its stdout
		answers <- err
	}()
	_, copyErr := io.Copy(childIn, stdin) // until the client closes stdin
	closeErr := childIn.Close()
	outErr := <-answers // cmd.Wait closes childOut: read it to the end first
	return errors.Join(copyErr, closeErr, outErr, cmd.Wait())
}

// ReverseProxy is the HTTP workload's reference: net/http/httputil.ReverseProxy
// in front of one URL, the thinnest HTTP hop there is (it parses nothing above
// HTTP). It prints the URL it serves on stdout, then serves until killed.
func ReverseProxy(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("reverse-proxy: want the target URL")
	}
	target, err := url.Parse(args[0])
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1 // event streams pass at once, as the trunk passes them
	fmt.Fprintf(stdout, "http://%s%s\n", ln.Addr(), target.Path)
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
