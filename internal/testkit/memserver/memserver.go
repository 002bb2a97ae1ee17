// Package memserver is an MCP server in the test's own process: a
// jsonrpc.Handler answering the handshake and the lists from fixed
// definitions and anything else through a function the test gives, reached
// over jsonrpc.NewInMemory instead of a subprocess's stdio. With
// upstream.Options.Dial (or proxy.Options.Dial) it lets the tests of
// upstream and proxy run the whole request path, bytes included, in
// milliseconds and without building a binary. Only tests import it.
package memserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// Server is one scripted server. Set its fields before the first dial.
type Server struct {
	// Name is the serverInfo name (default "memserver").
	Name string
	// Revision is the protocolVersion answered to initialize (default
	// protocol.Revision2025), and the server answers server/discover with "method
	// not found", so a client falls back to initialize. At protocol.Stateless
	// it answers server/discover instead, and initialize with "method not
	// found": a 2026-07-28 server.
	Revision string
	// Capabilities is the capabilities object (default: tools, prompts and
	// resources, each with listChanged).
	Capabilities json.RawMessage
	// Tools, Prompts, Resources and Templates are the lists, one page each
	// (SetTools changes the tools once connected).
	Tools, Prompts, Resources, Templates []json.RawMessage
	// Handle answers every other request (tools/call, prompts/get,
	// resources/read, ...); nil answers "method not found". ctx ends when
	// the client cancels. Conn reaches the client meanwhile (to ask it
	// something or send progress).
	Handle func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

	mu       sync.Mutex
	conn     *jsonrpc.InMemory
	received []string
	dials    int
	gone     []chan struct{} // one a dial, closed when the server's end has stopped serving
}

// Dial connects a client (its handler h) to the server and returns the
// client's end; the server's end is closed with it. A new dial replaces
// the connection Conn returns (a restart).
func (s *Server) Dial(h jsonrpc.Handler) *jsonrpc.InMemory {
	client, server := jsonrpc.NewInMemory(h, s, nil)
	gone := make(chan struct{})
	s.mu.Lock()
	s.conn = server
	s.dials++
	s.gone = append(s.gone, gone)
	s.mu.Unlock()
	go func() { // the server's end goes when the client's does
		<-server.Done()
		_ = server.Close(context.Background())
		close(gone)
	}()
	return client
}

// Stopped waits until the server's end of every connection dialed so far
// has stopped serving, its handlers returned, or ctx ends. The server's
// end stops after the client's has closed, on goroutines of its own, so a
// test that checks for leaked goroutines waits for this first.
func (s *Server) Stopped(ctx context.Context) error {
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	for _, g := range gone {
		select {
		case <-g:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Conn is the server's end of the newest connection (nil before a dial).
func (s *Server) Conn() *jsonrpc.InMemory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// Received lists the methods of the requests and notifications received,
// in order.
func (s *Server) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.received...)
}

// SetTools replaces the tools and tells the client the list changed.
func (s *Server) SetTools(tools ...json.RawMessage) error {
	s.mu.Lock()
	s.Tools = tools
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return nil
	}
	return conn.Notify("notifications/tools/list_changed", nil)
}

// Dials counts the connections made to the server.
func (s *Server) Dials() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials
}

func (s *Server) note(method string) {
	s.mu.Lock()
	s.received = append(s.received, method)
	s.mu.Unlock()
}

// HandleNotification records the notification.
func (s *Server) HandleNotification(method string, _ json.RawMessage) { s.note(method) }

// HandleRequest answers the handshake, ping and the lists itself and hands
// the rest to Handle.
func (s *Server) HandleRequest(ctx context.Context, req jsonrpc.Request) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	s.note(method)
	stateless := s.Revision == protocol.Stateless
	switch method {
	case "initialize":
		if stateless {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q not found", method)
		}
		return s.initResult()
	case protocol.MethodDiscover:
		if stateless {
			return s.discoverResult()
		}
	case "ping":
		return json.RawMessage(`{}`), nil
	case "tools/list":
		s.mu.Lock()
		tools := s.Tools
		s.mu.Unlock()
		return list("tools", tools)
	case "prompts/list":
		return list("prompts", s.Prompts)
	case "resources/list":
		return list("resources", s.Resources)
	case "resources/templates/list":
		return list("resourceTemplates", s.Templates)
	}
	if s.Handle == nil || method == protocol.MethodDiscover {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q not found", method)
	}
	return s.Handle(ctx, method, params)
}

func (s *Server) initResult() (json.RawMessage, error) {
	name, caps := s.info()
	rev := s.Revision
	if rev == "" {
		rev = protocol.Revision2025
	}
	return json.Marshal(map[string]any{"protocolVersion": rev, "capabilities": caps, "serverInfo": name})
}

// discoverResult is the 2026-07-28 server/discover answer.
func (s *Server) discoverResult() (json.RawMessage, error) {
	info, caps := s.info()
	return json.Marshal(map[string]any{
		"supportedVersions": []string{protocol.Stateless},
		"capabilities":      caps,
		"_meta":             map[string]any{protocol.MetaServerInfo: info},
	})
}

// info is the server's name and version, and its capabilities.
func (s *Server) info() (map[string]string, json.RawMessage) {
	name, caps := s.Name, s.Capabilities
	if name == "" {
		name = "memserver"
	}
	if caps == nil {
		caps = json.RawMessage(`{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true}}`)
	}
	return map[string]string{"name": name, "version": "1.0.0"}, caps
}

// list is one page holding items byte for byte (json.Marshal would
// compact them and escape HTML characters).
func list(key string, items []json.RawMessage) (json.RawMessage, error) {
	b := []byte(`{"` + key + `":[`)
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	return append(b, "]}"...), nil
}

// Set is the servers of a test by name: its Dial is what
// upstream.Options.Dial wants, once wrapped to return the upstream type.
type Set map[string]*Server

// Dial connects to the server spec names.
func (set Set) Dial(spec config.Spec, h jsonrpc.Handler) (*jsonrpc.InMemory, error) {
	s, ok := set[spec.Name]
	if !ok {
		return nil, fmt.Errorf("no in-memory server %q", spec.Name)
	}
	return s.Dial(h), nil
}

// Tool is a tool definition with an empty object schema.
func Tool(name, description string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"name":        name,
		"description": description,
		"inputSchema": map[string]any{"type": "object"},
	})
	return b
}

// Text is a tools/call result of one text content.
func Text(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}})
	return b
}
