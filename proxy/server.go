package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Server is the trunk's MCP server side: it speaks to one host over a
// line-delimited stream (mcptrunk's stdin and stdout), answers the
// handshake itself, and hands everything else to the Trunk.
type Server struct {
	// fixed at creation
	trunk  *Trunk
	conn   *jsonrpc.Conn
	out    *outbox // notifications to the host
	logger *slog.Logger

	initialized atomic.Bool

	// Progress for the requests upstreams send the host (sampling,
	// elicitation, roots): each progressToken is replaced with one the trunk
	// makes up (two upstreams may well pick the same token), and the host's
	// notifications/progress for it go back to the upstream that asked,
	// with its own token. See routeProgress.
	progressSeq    atomic.Int64
	progressRoutes sync.Map // the trunk's token (raw JSON) -> progressRoute
}

// progressRoute is where the host's progress for one forwarded request goes.
type progressRoute struct {
	server string
	token  json.RawMessage // the upstream's own token, as it sent it
}

// Supported protocol revisions, newest first. A host asking for another
// gets the newest, as the spec prescribes.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Serve runs the trunk as an MCP server on in and out until in ends (the
// host closed stdin) or ctx ends, then shuts every upstream down. Nothing
// but protocol messages is written to out.
func (t *Trunk) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s := &Server{trunk: t, logger: t.logger}
	s.conn = jsonrpc.NewConn(in, out, s, &jsonrpc.Options{Logger: t.logger.With("peer", "host"), AnswerInvalid: true})
	s.conn.SetMaxMessageBytes(t.cfg.Load().Trunk.MaxMessageBytes, limitSetting)
	stopOutbox := make(chan struct{})
	s.out = newOutbox(s.conn, stopOutbox, func(method string, err error) { t.notifyFailed("", method, err) })
	var outboxDone sync.WaitGroup
	outboxDone.Go(s.out.run)
	t.SetDownstream(s)

	served := make(chan error, 1)
	go func() { served <- s.conn.Serve() }()
	var err error
	select {
	case err = <-served:
		t.logger.Info("host closed the connection; shutting down")
	case <-ctx.Done():
		t.logger.Info("shutting down", "reason", context.Cause(ctx))
	}
	// The outbox stops first: the announcer may be waiting in it for room
	// that a host that went away will never make, and Close waits for the
	// announcer.
	close(stopOutbox)
	closeErr := t.Close(context.WithoutCancel(ctx))
	outboxDone.Wait()
	return errors.Join(err, closeErr)
}

// HandleRequest answers the handshake and passes every other request on.
func (s *Server) HandleRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "initialize":
		return s.initialize(params)
	}
	res, err := s.trunk.Handle(ctx, method, params)
	s.out.flush()
	return res, err
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
	case "notifications/progress":
		s.forwardProgress(method, params)
	}
}

// Notify and Call make the Server the trunk's Downstream.
// Notify queues (see outbox.go); it never waits for the host.
func (s *Server) Notify(method string, params json.RawMessage) error {
	return s.out.post(method, params)
}

func (s *Server) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return s.conn.Call(ctx, method, params)
}

// routeProgress prepares a request from an upstream for the host: when it
// carries _meta.progressToken, the token is replaced with one unique to the
// trunk, and the host's notifications/progress for it are routed back to
// server, with the upstream's token, until release is called (after the
// host's answer: its progress comes before it).
func (s *Server) routeProgress(server string, params json.RawMessage) (json.RawMessage, func()) {
	noop := func() {}
	start, end, found, err := rawjson.FieldSpan(params, "_meta")
	if err != nil || !found {
		return params, noop
	}
	meta := params[start:end]
	ts, te, found, err := rawjson.FieldSpan(meta, "progressToken")
	if err != nil || !found {
		return params, noop
	}
	token := json.RawMessage(strconv.Quote("mcptrunk-" + strconv.FormatInt(s.progressSeq.Add(1), 10)))
	newMeta, err := rawjson.ReplaceField(meta, "progressToken", token)
	if err != nil {
		return params, noop
	}
	out, err := rawjson.ReplaceField(params, "_meta", newMeta)
	if err != nil {
		return params, noop
	}
	key := string(token)
	s.progressRoutes.Store(key, progressRoute{server: server, token: append(json.RawMessage(nil), meta[ts:te]...)})
	return out, func() { s.progressRoutes.Delete(key) }
}

// forwardProgress passes the host's progress for a forwarded request to the
// upstream that sent the request, with that upstream's token. Progress for
// anything else has nowhere to go.
func (s *Server) forwardProgress(method string, params json.RawMessage) {
	start, end, found, err := rawjson.FieldSpan(params, "progressToken")
	if err != nil || !found {
		return
	}
	var compacted bytes.Buffer
	if json.Compact(&compacted, params[start:end]) != nil {
		return
	}
	v, ok := s.progressRoutes.Load(compacted.String())
	if !ok {
		s.logger.Debug("progress from the host for no forwarded request", "token", compacted.String())
		return
	}
	route := v.(progressRoute)
	out, err := rawjson.ReplaceField(params, "progressToken", route.token)
	if err != nil {
		return
	}
	c, ok := s.trunk.Host().Client(route.server)
	if !ok {
		return
	}
	if err := c.Notify(method, out); err != nil {
		s.logger.Debug("passing the host's progress on failed", "server", route.server, "error", err)
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
