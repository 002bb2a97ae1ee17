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

// rawConn is the raw-JSON host: line-based JSON-RPC over a process's
// stdin and stdout that keeps every message's bytes, so a result that went
// through the trunk can be compared byte for byte with what the upstream
// sends directly. It records every stdout line, answers the server's
// requests (roots/list with no roots, ping, anything else with
// method-not-found), and keeps notifications. A response the trunk writes
// is matched by the id at its head without decoding the line first: a
// 20 MB result decoded under -race would take longer than the trunk takes
// to pass it on.
type rawConn struct {
	*proc
	nextID atomic.Int64
	read   chan struct{} // closed when stdout reached EOF

	mu            sync.Mutex
	held          chan struct{}          // while set (hold), stdout is not read: closed by resume
	pending       map[string]chan []byte // by id: the response line, as read
	lines         [][]byte               // every stdout line, as read
	notifications []json.RawMessage
}

// startRaw starts cmd and connects a rawConn to it. The process is ended
// at the end of the test (startProc).
func startRaw(t testing.TB, name string, cmd *exec.Cmd) *rawConn {
	t.Helper()
	c := &rawConn{
		proc:    startProc(t, name, cmd, procOptions{pipes: true}),
		read:    make(chan struct{}),
		pending: map[string]chan []byte{},
	}
	go c.readLoop(c.stdout)
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
		c.mu.Lock()
		held := c.held
		c.mu.Unlock()
		if held != nil {
			<-held
		}
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
	c.lines = append(c.lines, line)
	c.mu.Unlock()
	if id, ok := responseID(line); ok {
		c.deliver(id, line)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
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
		c.notifications = append(c.notifications, bytes.TrimSpace(line))
		c.mu.Unlock()
	case hasID:
		c.deliver(string(m.ID), line)
	}
}

// hold stops reading stdout after the line being read, as a host that
// does not read would; resume reads on.
func (c *rawConn) hold() {
	c.mu.Lock()
	c.held = make(chan struct{})
	c.mu.Unlock()
}

func (c *rawConn) resume() {
	c.mu.Lock()
	close(c.held)
	c.held = nil
	c.mu.Unlock()
}

// deliver hands a response line to the call waiting for id.
func (c *rawConn) deliver(id string, line []byte) {
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		ch <- line
	}
}

// responseID reads the id of a response as the trunk writes it,
// {"jsonrpc":"2.0","id":N,"result" or "error"...}, from the line's head.
// Anything else (another peer's key order, a request) is not matched here.
func responseID(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest[:min(len(rest), 24)], ',')
	if end < 0 {
		return "", false
	}
	id := rest[:end]
	if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
		return "", false
	}
	after := rest[end+1:]
	if !bytes.HasPrefix(after, []byte(`"result"`)) && !bytes.HasPrefix(after, []byte(`"error"`)) {
		return "", false
	}
	return string(id), true
}

// decodeResponse splits a response line into its result and error.
func decodeResponse(line []byte) (rawResponse, error) {
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return rawResponse{}, fmt.Errorf("the response is not JSON: %w", err)
	}
	return rawResponse{Result: m.Result, Err: m.Error}, nil
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
	line, err := c.callLine(ctx, method, params)
	if err != nil {
		return rawResponse{}, err
	}
	return decodeResponse(line)
}

// callLine sends a request and returns its response line as read.
func (c *rawConn) callLine(ctx context.Context, method string, params any) ([]byte, error) {
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + id + `,"method":` + mustJSON(method)
	if params != nil {
		frame += `,"params":` + string(rawJSON(params))
	}
	frame += `}`
	if err := c.write([]byte(frame)); err != nil {
		return nil, fmt.Errorf("writing the request: %w", err)
	}
	select {
	case line, ok := <-ch:
		if !ok {
			return nil, errors.New("the process closed its stdout before answering")
		}
		return line, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("no answer: %w", ctx.Err())
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

// callTool calls a tool and returns its text; a JSON-RPC error, or a
// result with isError, is returned as an error. It decodes only the text
// of the result, so a result of megabytes costs little.
func (c *rawConn) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	line, err := c.callLine(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", err
	}
	var m struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return "", fmt.Errorf("%s: %v", name, err)
	}
	if m.Error != nil {
		return "", m.Error
	}
	var b strings.Builder
	for _, x := range m.Result.Content {
		b.WriteString(x.Text)
	}
	if m.Result.IsError {
		return b.String(), fmt.Errorf("tool error: %s", b.String())
	}
	return b.String(), nil
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
	lines := make(chan []byte, 1)
	c.mu.Lock()
	c.pending[key] = lines
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + key + `,"method":` + mustJSON(method) + `,"params":` + string(rawJSON(params)) + `}`
	if err := c.write([]byte(frame)); err != nil {
		t.Fatalf("%s: writing %s: %v", c.name, method, err)
	}
	out := make(chan rawResponse, 1)
	// Ends when the response arrives or stdout does (readLoop closes
	// every pending channel at EOF).
	go func() {
		defer close(out)
		if line, ok := <-lines; ok {
			r, err := decodeResponse(line)
			if err != nil {
				r.Err = &rpcError{Code: -32700, Message: err.Error()}
			}
			out <- r
		}
	}()
	return out
}
