package httpserve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy"
)

// serveListener serves a handler of fake sessions through its own Server
// and Listener, as serve --http does, until the test ends.
func serveListener(t *testing.T, opts Options) (h *Handler, addr string) {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	h = newHandler(nil, func(out jsonrpc.MessageWriter, _ *proxy.SessionOptions) runner {
		return newFakeServer(out, nil)
	}, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := h.Server(nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(h.Listener(ln)) }()
	t.Cleanup(func() {
		h.Close()
		_ = srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return h, ln.Addr().String()
}

// dialFrom opens a connection to addr from a loopback address of its own
// (Linux routes all of 127.0.0.0/8 to lo).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readResponse reads one HTTP response from c, within a deadline.
func readResponse(t *testing.T, c net.Conn, br *bufio.Reader) (*http.Response, error) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return resp, err
}

// A request without the token is refused before its body is read: the
// 401 comes while the body is still on its way, and the connection ends.
func TestTokenCheckedBeforeTheBody(t *testing.T) {
	_, addr := serveListener(t, Options{Token: strings.Repeat("t", 32)})
	c := dialFrom(t, "127.0.0.1", addr)
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{\"jsonrpc\":")
	br := bufio.NewReader(c)
	resp, err := readResponse(t, c, br)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without a token, body pending: %v %v, want 401 at once", resp, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the 401 the connection is still open (%v)", err)
	}
}

// A body that does not arrive within BodyTimeout gets 408.
func TestBodyReadDeadline(t *testing.T) {
	_, addr := serveListener(t, Options{BodyTimeout: 200 * time.Millisecond})
	c := dialFrom(t, "127.0.0.1", addr)
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
	resp, err := readResponse(t, c, bufio.NewReader(c))
	if err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a body that stalls: %v %v, want 408", resp, err)
	}
}

// Slow bodies with a valid token, each missing a different part of
// itself: every one gets 408 and then its connection ends (net/http would
// otherwise wait, with no deadline, for the rest of the body), while a
// host on another connection is answered throughout.
func TestSlowBodiesEndTheirConnections(t *testing.T) {
	const (
		slow  = 40
		token = "tttttttttttttttttttttttttttttttt"
	)
	_, addr := serveListener(t, Options{Token: token, BodyTimeout: 300 * time.Millisecond, MaxConns: slow + 2, MaxConnsPerClient: slow + 2})
	session := ""
	post := func(c net.Conn, length int, body string) {
		_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+token+"\r\nMcp-Session-Id: "+session+
			"\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(length)+"\r\n\r\n"+body)
	}
	whole := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":"a-token-of-some-length"}}}`

	host := dialFrom(t, "127.0.0.1", addr)
	hostReader := bufio.NewReader(host)
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post(host, len(initialize), initialize)
	resp, err := readResponse(t, host, hostReader)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	session = resp.Header.Get("Mcp-Session-Id")
	stop, hostDone := make(chan struct{}), make(chan error, 1)
	var answered atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				hostDone <- nil
				return
			default:
			}
			post(host, len(whole), whole)
			_ = host.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(hostReader, nil)
			if err != nil {
				hostDone <- err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				hostDone <- errors.New(resp.Status)
				return
			}
			answered.Add(1)
		}
	}()

	ended := make(chan error, slow)
	closedIn := make(chan time.Duration, slow) // from each 408 to its connection's end
	for i := range slow {
		c := dialFrom(t, "127.0.0.1", addr)
		// The body stops at a different place each time: after one
		// byte, inside a string, at the last byte; every fourth is
		// chunked and stops inside a chunk or before the last.
		part := whole[:1+i*(len(whole)-2)/(slow-1)]
		if i%4 == 3 {
			_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+token+"\r\nMcp-Session-Id: "+session+
				"\r\nAccept: application/json\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(len(whole)), 16)+"\r\n"+part)
			if i%8 == 7 {
				_, _ = io.WriteString(c, whole[len(part):]+"\r\n") // the chunk whole, and no last chunk
			}
		} else {
			post(c, len(whole), part)
		}
		go func() {
			br := bufio.NewReader(c)
			resp, err := readResponse(t, c, br)
			if err != nil || resp.StatusCode != http.StatusRequestTimeout {
				ended <- fmt.Errorf("a slow body: %v %v, want 408", resp, err)
				return
			}
			answered := time.Now()
			_ = c.SetReadDeadline(answered.Add(5 * time.Second))
			if _, err := br.ReadByte(); err != io.EOF {
				ended <- fmt.Errorf("5 s after its 408 the connection is still open (%v)", err)
				return
			}
			closedIn <- time.Since(answered)
			ended <- nil
		}()
	}
	for range slow {
		if err := <-ended; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	if err := <-hostDone; err != nil {
		t.Fatalf("the host's call, after %d answered: %v", answered.Load(), err)
	}
	close(closedIn)
	var slowest time.Duration
	for d := range closedIn {
		slowest = max(slowest, d)
	}
	t.Logf("%d slow bodies: each connection closed within %s of its 408; %d calls of the host answered meanwhile",
		slow, slowest.Round(time.Microsecond), answered.Load())
	if answered.Load() == 0 {
		t.Fatal("the host was not answered while the slow bodies waited")
	}
	// Every slot the slow bodies held is free again.
	for i := range slow + 1 {
		c := dialFrom(t, "127.0.0.1", addr)
		post(c, len(whole), whole)
		if resp, err := readResponse(t, c, bufio.NewReader(c)); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d after the slow bodies ended: %v %v", i, resp, err)
		}
	}
}

// An admitted request whose handler has no use for its body (here a GET
// with one that never arrives) is answered, and its connection ends
// rather than waiting for the rest.
func TestUnreadBodyEndsTheConnection(t *testing.T) {
	_, addr := serveListener(t, Options{})
	c := dialFrom(t, "127.0.0.1", addr)
	_, _ = io.WriteString(c, "GET /mcp/unknown HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 100\r\n\r\n{")
	br := bufio.NewReader(c)
	if resp, err := readResponse(t, c, br); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET with a body that stalls: %v %v, want 404", resp, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the answer the connection is still open (%v)", err)
	}
}

// An idle keep-alive connection is closed after IdleTimeout.
func TestIdleConnectionClosed(t *testing.T) {
	_, addr := serveListener(t, Options{IdleTimeout: 200 * time.Millisecond})
	c := dialFrom(t, "127.0.0.1", addr)
	_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	br := bufio.NewReader(c)
	if resp, err := readResponse(t, c, br); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("an idle connection: %v, want it closed by the trunk", err)
	}
}

// Connections past MaxConnsPerClient from one address, or past MaxConns
// in all, are closed at once; a closed one frees its place.
func TestConnectionLimits(t *testing.T) {
	_, addr := serveListener(t, Options{MaxConns: 3, MaxConnsPerClient: 2})
	healthy := func(c net.Conn) error {
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
			return err
		}
		resp, err := readResponse(t, c, bufio.NewReader(c))
		if err == nil && resp.StatusCode != http.StatusOK {
			err = errors.New(resp.Status)
		}
		return err
	}
	a1, a2 := dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr)
	for _, c := range []net.Conn{a1, a2} {
		if err := healthy(c); err != nil {
			t.Fatalf("a connection within the limits: %v", err)
		}
	}
	if err := healthy(dialFrom(t, "127.0.0.1", addr)); err == nil {
		t.Error("a third connection from 127.0.0.1 (2 per client) was served")
	}
	b := dialFrom(t, "127.0.0.2", addr)
	if err := healthy(b); err != nil {
		t.Errorf("another address while 127.0.0.1 is at its limit: %v", err)
	}
	if err := healthy(dialFrom(t, "127.0.0.3", addr)); err == nil {
		t.Error("a fourth connection (3 in all) was served")
	}
	_ = a1.Close()
	deadline := time.Now().Add(10 * time.Second)
	for healthy(dialFrom(t, "127.0.0.1", addr)) != nil { // the server notices a1's end when it reads
		if time.Now().After(deadline) {
			t.Fatal("a closed connection did not free its place")
		}
	}
}
