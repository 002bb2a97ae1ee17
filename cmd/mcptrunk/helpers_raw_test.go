package main

// The raw JSON-RPC client: line-based, keeping every message's bytes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rpcError is a JSON-RPC error object as received.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// rawResponse is one response, result kept as the bytes received.
type rawResponse struct {
	Result json.RawMessage
	Err    *rpcError
}

// rawConn is a line-based JSON-RPC client over a process's stdin and
// stdout. It records every stdout line, answers the server's requests
// (roots/list with no roots, ping, anything else with method-not-found),
// and keeps notifications.
type rawConn struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	tag    string
	stdin  io.WriteCloser
	stderr *syncBuffer
	nextID atomic.Int64
	exited chan struct{} // closed when the process has been waited for
	read   chan struct{} // closed when stdout reached EOF

	writeMu sync.Mutex

	mu            sync.Mutex
	pending       map[string]chan rawResponse
	lines         [][]byte // every stdout line, as read
	notifications []json.RawMessage
	waitErr       error
}

// startRaw starts cmd and connects a rawConn to it. The process is closed
// at the end of the test (stdin closed, then killed after a grace period).
func startRaw(t testing.TB, name string, cmd *exec.Cmd) *rawConn {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &rawConn{
		t: t, name: name, cmd: cmd, stdin: stdin, stderr: &syncBuffer{},
		exited:  make(chan struct{}),
		read:    make(chan struct{}),
		pending: map[string]chan rawResponse{},
	}
	cmd.Stderr = c.stderr
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, tagEnv+"="); ok {
			c.tag = v
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go c.readLoop(stdout)
	go func() {
		<-c.read // Wait closes stdout: read everything first
		err := cmd.Wait()
		c.mu.Lock()
		c.waitErr = err
		c.mu.Unlock()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.shutdown(15 * time.Second)
		if cmd.Path == trunkBin {
			checkNoRace(t, c.stderr)
		}
	})
	return c
}

// startRawTrunk runs `mcptrunk serve --config cfg` under a raw client and
// performs the handshake.
func startRawTrunk(t testing.TB, ctx context.Context, cfg string) *rawConn {
	t.Helper()
	tag := newTag(t)
	c := startRaw(t, "mcptrunk", trunkCmd(tag, "serve", "--config", cfg))
	c.initialize(ctx)
	return c
}

// startRawDirect runs an upstream server directly under a raw client and
// performs the handshake.
func startRawDirect(t testing.TB, ctx context.Context, name string, argv ...string) *rawConn {
	t.Helper()
	tag := newTag(t)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), tagEnv+"="+tag)
	c := startRaw(t, name, cmd)
	c.initialize(ctx)
	return c
}

func (c *rawConn) readLoop(stdout io.Reader) {
	defer close(c.read)
	r := bufio.NewReaderSize(stdout, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			c.handleLine(line)
		}
		if err != nil {
			c.mu.Lock()
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
	}
}

func (c *rawConn) handleLine(line []byte) {
	c.mu.Lock()
	c.lines = append(c.lines, bytes.Clone(line))
	c.mu.Unlock()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return // purity tests look at c.lines
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		go c.answer(m.ID, m.Method)
	case m.Method != "":
		c.mu.Lock()
		c.notifications = append(c.notifications, bytes.Clone(bytes.TrimSpace(line)))
		c.mu.Unlock()
	case hasID:
		c.mu.Lock()
		ch, ok := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ok {
			ch <- rawResponse{Result: m.Result, Err: m.Error}
		}
	}
}

// answer replies to a request the server sent.
func (c *rawConn) answer(id json.RawMessage, method string) {
	var frame string
	switch method {
	case "ping":
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
	case "roots/list":
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, id)
	default:
		frame = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
	}
	_ = c.write([]byte(frame))
}

func (c *rawConn) write(frame []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(append(frame, '\n'))
	return err
}

// call sends a request and returns its response. params may be a string or
// []byte of JSON, or any value to marshal; nil sends no params. A transport
// failure (process gone, ctx over) fails the test.
func (c *rawConn) call(ctx context.Context, method string, params any) rawResponse {
	c.t.Helper()
	resp, err := c.tryCall(ctx, method, params)
	if err != nil {
		c.t.Fatalf("%s: %s: %v\nstderr:\n%s", c.name, method, err, tail(c.stderr.String(), 3000))
	}
	return resp
}

func (c *rawConn) tryCall(ctx context.Context, method string, params any) (rawResponse, error) {
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := make(chan rawResponse, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + id + `,"method":` + mustJSON(method)
	if params != nil {
		frame += `,"params":` + string(rawJSON(params))
	}
	frame += `}`
	if err := c.write([]byte(frame)); err != nil {
		return rawResponse{}, fmt.Errorf("writing the request: %w", err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return rawResponse{}, errors.New("the process closed its stdout before answering")
		}
		return r, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return rawResponse{}, fmt.Errorf("no answer: %w", ctx.Err())
	}
}

// result calls and fails the test on a JSON-RPC error.
func (c *rawConn) result(ctx context.Context, method string, params any) json.RawMessage {
	c.t.Helper()
	r := c.call(ctx, method, params)
	if r.Err != nil {
		c.t.Fatalf("%s: %s %s: %v", c.name, method, rawJSON(params), r.Err)
	}
	return r.Result
}

func (c *rawConn) notify(method string, params any) {
	frame := `{"jsonrpc":"2.0","method":` + mustJSON(method)
	if params != nil {
		frame += `,"params":` + string(rawJSON(params))
	}
	if err := c.write([]byte(frame + `}`)); err != nil {
		c.t.Fatalf("%s: %s: %v", c.name, method, err)
	}
}

func (c *rawConn) initialize(ctx context.Context) json.RawMessage {
	c.t.Helper()
	res := c.result(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": "mcptrunk-e2e-raw", "version": "0"},
	})
	c.notify("notifications/initialized", nil)
	return res
}

// list follows every page of a list and returns its items raw, in order.
func (c *rawConn) list(ctx context.Context, method, field string) []json.RawMessage {
	c.t.Helper()
	var items []json.RawMessage
	var params any
	for page := 0; page < 100; page++ {
		res := c.result(ctx, method, params)
		var p map[string]json.RawMessage
		if err := json.Unmarshal(res, &p); err != nil {
			c.t.Fatalf("%s: %s: %v", c.name, method, err)
		}
		var pageItems []json.RawMessage
		if raw, ok := p[field]; ok {
			if err := json.Unmarshal(raw, &pageItems); err != nil {
				c.t.Fatalf("%s: %s: field %s: %v", c.name, method, field, err)
			}
		}
		items = append(items, pageItems...)
		var cursor string
		if raw, ok := p["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &cursor)
		}
		if cursor == "" {
			return items
		}
		params = map[string]string{"cursor": cursor}
	}
	c.t.Fatalf("%s: %s: more than 100 pages", c.name, method)
	return nil
}

// stdoutLines returns a copy of every line read from stdout so far.
func (c *rawConn) stdoutLines() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.lines...)
}

// closeStdin ends the session the way a host does.
func (c *rawConn) closeStdin() {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.stdin.Close()
}

// waitExit waits for the process to exit; false if it did not in time.
func (c *rawConn) waitExit(timeout time.Duration) bool {
	select {
	case <-c.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// shutdown closes stdin, waits up to grace for an exit, then kills.
func (c *rawConn) shutdown(grace time.Duration) {
	c.closeStdin()
	if !c.waitExit(grace) {
		c.t.Errorf("%s did not exit within %s of stdin EOF; killing it", c.name, grace)
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// exitErr is how the process ended (nil for exit status 0).
func (c *rawConn) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var exit *exec.ExitError
	if errors.As(c.waitErr, &exit) {
		return exit
	}
	return c.waitErr
}

// rawInit starts mcptrunk serve under a raw client and sends an initialize
// with the given protocol version and capabilities (JSON).
func rawInit(t testing.TB, ctx context.Context, cfg, version, caps string) (*rawConn, json.RawMessage) {
	t.Helper()
	c := startRaw(t, "mcptrunk", trunkCmd(newTag(t), "serve", "--config", cfg))
	res := c.result(ctx, "initialize", `{"protocolVersion":`+mustJSON(version)+`,"capabilities":`+caps+`,"clientInfo":{"name":"mcptrunk-protocol-raw","version":"0"}}`)
	c.notify("notifications/initialized", nil)
	return c, res
}

// rawNotes returns the notifications with method the raw client has got.
func rawNotes(c *rawConn, method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.notifications {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(n, &m) == nil && m.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// rawSend writes a request with a chosen id and returns where its response
// will arrive.
func rawSend(t testing.TB, c *rawConn, id int, method string, params any) chan rawResponse {
	t.Helper()
	key := fmt.Sprint(id)
	ch := make(chan rawResponse, 1)
	c.mu.Lock()
	c.pending[key] = ch
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + key + `,"method":` + mustJSON(method) + `,"params":` + string(rawJSON(params)) + `}`
	if err := c.write([]byte(frame)); err != nil {
		t.Fatalf("%s: writing %s: %v", c.name, method, err)
	}
	return ch
}
