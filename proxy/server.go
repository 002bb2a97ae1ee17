package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/upstream/jsonrpc"
)

// Server is the trunk's MCP server side: it speaks to one host over a
// line-delimited stream (mcptrunk's stdin and stdout), answers the
// handshake itself, and hands everything else to the Trunk.
type Server struct {
	// fixed at creation
	trunk  *Trunk
	conn   *jsonrpc.Conn
	logger *slog.Logger

	initialized atomic.Bool
}

// Supported protocol revisions, newest first. A host asking for another
// gets the newest, as the spec prescribes.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Serve runs the trunk as an MCP server on in and out until in ends (the
// host closed stdin) or ctx ends, then shuts every upstream down. Nothing
// but protocol messages is written to out.
func (t *Trunk) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s := &Server{trunk: t, logger: t.logger}
	s.conn = jsonrpc.NewConn(in, out, s, &jsonrpc.Options{Logger: t.logger.With("peer", "host")})
	t.SetDownstream(s.conn)

	served := make(chan error, 1)
	go func() { served <- s.conn.Serve() }()
	var err error
	select {
	case err = <-served:
		t.logger.Info("host closed the connection; shutting down")
	case <-ctx.Done():
		t.logger.Info("shutting down", "reason", context.Cause(ctx))
	}
	closeErr := t.Close(context.WithoutCancel(ctx))
	return errors.Join(err, closeErr)
}

// HandleRequest answers the handshake and passes every other request on.
func (s *Server) HandleRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "initialize":
		return s.initialize(params)
	}
	return s.trunk.Handle(ctx, method, params)
}

// HandleNotification reacts to the host's notifications.
func (s *Server) HandleNotification(method string, params json.RawMessage) {
	switch method {
	case "notifications/initialized":
		s.initialized.Store(true)
	case "notifications/roots/list_changed":
		for _, c := range s.trunk.clients() {
			_ = c.Notify(method, params) // servers that are not ready miss nothing they asked for
		}
	}
}

// initialize answers at once and starts the upstreams with the part of the
// host's capabilities that upstreams may use through the trunk.
func (s *Server) initialize(params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ClientInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"clientInfo"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "initialize: %v", err)
	}
	version := protocolVersions[0]
	for _, v := range protocolVersions {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	s.logger.Info("host connected", "client", p.ClientInfo.Name, "clientVersion", p.ClientInfo.Version, "protocol", version)
	s.trunk.Start(upstreamCapabilities(p.Capabilities))

	return json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities": map[string]any{
			"tools":       map[string]bool{"listChanged": true},
			"prompts":     map[string]bool{"listChanged": true},
			"resources":   map[string]bool{"listChanged": true, "subscribe": true},
			"logging":     struct{}{},
			"completions": struct{}{},
		},
		"serverInfo": map[string]string{"name": "mcptrunk", "version": s.trunk.version},
	})
}

// upstreamCapabilities keeps the host capabilities that the trunk forwards
// for (sampling, elicitation, roots), so an upstream is never told the host
// can do something it cannot.
func upstreamCapabilities(host map[string]json.RawMessage) json.RawMessage {
	keep := map[string]json.RawMessage{}
	for _, k := range []string{"sampling", "elicitation", "roots"} {
		if v, ok := host[k]; ok {
			keep[k] = v
		}
	}
	out, _ := json.Marshal(keep)
	return out
}
