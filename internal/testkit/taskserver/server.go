// Package taskserver is an MCP server of the stateless revision
// (2026-07-28) over streamable HTTP that implements the tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663) with every fixture the official
// conformance suite's tasks scenarios call: greet, slow_compute,
// failing_job, protocol_error_job, confirm_delete, multi_input and
// test_tool_with_task. No SDK the tests pin implements the extension, so
// this is the real server the trunk's tasks routing is held to: each task
// runs on a goroutine of its own with real timers, is cancelled through its
// context, parks on input until tasks/update answers it, expires after its
// ttlMs, and reports each change of status to the subscriptions/listen
// streams that asked for it.
//
// It is a library, not a process, so that a test serves it with httptest
// and Close ends every task it started.
package taskserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// Extension is the tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// Options tune a Server; the zero value is what the conformance suite needs.
type Options struct {
	// TTL is every task's ttlMs: how long it stays readable after it is
	// created (60 s when zero).
	TTL time.Duration
	// PollInterval is the pollIntervalMs the server suggests (100 ms when
	// zero).
	PollInterval time.Duration
}

// Server is the tasks server: an http.Handler for its MCP endpoint.
type Server struct {
	opts  Options
	tools map[string]*tool
	order []string // the tools' names in tools/list order

	mu        sync.Mutex
	tasks     map[string]*task
	listeners map[*listener]struct{}
	closed    bool

	done chan struct{} // closed by Close: listens end
	wg   sync.WaitGroup
}

// New returns a Server with the conformance fixtures.
func New(opts Options) *Server {
	if opts.TTL <= 0 {
		opts.TTL = time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	s := &Server{opts: opts, tasks: map[string]*task{}, listeners: map[*listener]struct{}{}, done: make(chan struct{})}
	s.tools = map[string]*tool{}
	for _, t := range fixtures() {
		s.tools[t.name] = t
		s.order = append(s.order, t.name)
	}
	return s
}

// Close cancels every task still running, ends every listen, and waits
// for their goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	for _, t := range s.tasks {
		t.expiry.Stop()
		t.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// rpcError is a JSON-RPC error, the answer to a request or a failed task's
// error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// missingExtension is -32021 naming the tasks extension.
func missingExtension(what string) *rpcError {
	return &rpcError{Code: protocol.CodeMissingClientCapabilities,
		Message: "Missing required client capability: " + what + " needs the " + Extension + " extension",
		Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{Extension: map[string]any{}}}}}
}

func invalidParams(format string, args ...any) *rpcError {
	return &rpcError{Code: -32602, Message: fmt.Sprintf(format, args...)}
}

// message is a JSON-RPC message a client sent.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// request is one request as a handler sees it.
type request struct {
	message
	meta      map[string]json.RawMessage
	extension bool // the request's client capabilities declare the tasks extension
}

// ServeHTTP answers one POST: a request with its JSON-RPC response (a
// subscriptions/listen with a stream), a notification or a response with
// 202. The stateless revision has no GET stream and no session to delete.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		writeJSON(w, http.StatusBadRequest, response(nil, nil, &rpcError{Code: -32700, Message: "Parse error"}))
		return
	}
	if m.Method == "" || len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	req, status, rerr := s.parse(r, m)
	if rerr != nil {
		writeJSON(w, status, response(m.ID, nil, rerr))
		return
	}
	if m.Method == protocol.MethodListen {
		s.listen(w, r, req)
		return
	}
	result, rerr := s.dispatch(r, req)
	writeJSON(w, http.StatusOK, response(m.ID, result, rerr))
}

// parse checks the headers against the body (SEP-2243: Mcp-Method always,
// Mcp-Name where the method names something, a task id included) and the
// revision, and reads the request's _meta.
func (s *Server) parse(r *http.Request, m message) (*request, int, *rpcError) {
	mismatch := func(format string, args ...any) (*request, int, *rpcError) {
		return nil, http.StatusBadRequest, &rpcError{Code: protocol.CodeHeaderMismatch, Message: fmt.Sprintf(format, args...)}
	}
	if h, ok := header(r, protocol.HeaderMethod); !ok || h != m.Method {
		return mismatch("Header mismatch: %s is %q, the body's method %q", protocol.HeaderMethod, h, m.Method)
	}
	if name, named := protocol.PrincipalName(m.Method, m.Params); named {
		h, ok := header(r, protocol.HeaderName)
		v, valid := protocol.ParseHeaderValue(h)
		if !ok || !valid || v != name {
			return mismatch("Header mismatch: %s is %q, the body names %q", protocol.HeaderName, h, name)
		}
	}
	req := &request{message: m}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(m.Params) > 0 && json.Unmarshal(m.Params, &p) != nil {
		return nil, http.StatusOK, invalidParams("params must be an object")
	}
	req.meta = p.Meta
	var version string
	if raw, ok := p.Meta[protocol.MetaProtocolVersion]; ok && json.Unmarshal(raw, &version) != nil {
		return nil, http.StatusOK, invalidParams("%s must be a string", protocol.MetaProtocolVersion)
	}
	if h, ok := header(r, protocol.HeaderProtocolVersion); ok && version == "" {
		version = h
	} else if ok && h != version {
		return mismatch("Header mismatch: %s is %q, the body's %s %q", protocol.HeaderProtocolVersion, h, protocol.MetaProtocolVersion, version)
	}
	if version != protocol.Stateless {
		return nil, http.StatusBadRequest, &rpcError{Code: protocol.CodeUnsupportedVersion, Message: "Unsupported protocol version",
			Data: map[string]any{"supported": []string{protocol.Stateless}, "requested": version}}
	}
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if raw, ok := p.Meta[protocol.MetaClientCapabilities]; ok && json.Unmarshal(raw, &caps) == nil {
		_, req.extension = caps.Extensions[Extension]
	}
	return req, 0, nil
}

// header is a request header's value with the blanks around it trimmed
// (RFC 9110 §5.5), and whether it was sent.
func header(r *http.Request, name string) (string, bool) {
	v, ok := r.Header[http.CanonicalHeaderKey(name)]
	if !ok || len(v) == 0 {
		return "", false
	}
	return strings.Trim(v[0], " \t"), true
}

// dispatch answers every request but subscriptions/listen. tasks/result
// and tasks/list, removed by the extension, are unknown methods.
func (s *Server) dispatch(r *http.Request, req *request) (any, *rpcError) {
	switch req.Method {
	case protocol.MethodDiscover:
		return map[string]any{
			protocol.FieldResultType:        protocol.ResultTypeComplete,
			protocol.FieldSupportedVersions: []string{protocol.Stateless},
			"capabilities":                  map[string]any{"tools": map[string]any{}, "extensions": map[string]any{Extension: map[string]any{}}},
			"_meta":                         map[string]any{protocol.MetaServerInfo: map[string]any{"name": "mcptrunk-taskserver", "version": "1.0.0"}},
			"ttlMs":                         0,
			"cacheScope":                    "public",
		}, nil
	case "tools/list":
		tools := make([]map[string]any, 0, len(s.order))
		for _, name := range s.order {
			tools = append(tools, s.tools[name].definition())
		}
		return map[string]any{protocol.FieldResultType: protocol.ResultTypeComplete, "tools": tools, "ttlMs": 0, "cacheScope": "public"}, nil
	case "tools/call":
		return s.call(r.Context(), req)
	case "tasks/get", "tasks/update", "tasks/cancel":
		return s.taskRequest(req)
	}
	return nil, &rpcError{Code: -32601, Message: "Method not found: " + req.Method}
}

// response is a JSON-RPC response; id null when the request could not be
// read.
func response(id json.RawMessage, result any, rerr *rpcError) map[string]any {
	if id == nil {
		id = json.RawMessage("null")
	}
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		m["error"] = rerr
	} else {
		m["result"] = result
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(response(nil, nil, &rpcError{Code: -32603, Message: "encoding the response: " + err.Error()}))
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
