package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Which revision a connection speaks is settled at every connect, because a
// restarted server may be a different build: with the config's
// protocolVersion unset the Client asks with server/discover (the stateless
// revision's handshake, which a 2025 server answers with method-not-found
// or ignores) and falls back to initialize on the same connection.

// discoverProbeMax bounds how long auto mode waits for a server/discover
// answer before assuming a 2025 server that ignores unknown methods. A
// variable for tests.
var discoverProbeMax = 5 * time.Second

// stateless reports whether the connection speaks the stateless revision
// (server/discover, per-request _meta, no session).
func (r InitResult) stateless() bool { return protocol.IsStateless(r.ProtocolVersion) }

// versionSetter is implemented by a transport that behaves differently at
// the stateless revision (streamable HTTP: no session, no standalone
// stream, the Mcp-Method and Mcp-Name headers).
type versionSetter interface {
	SetProtocolVersion(version string)
}

// negotiate settles the revision of a new connection under the config's
// protocolVersion and runs its handshake. The wire takes the revision as
// soon as the handshake's result says which (settle), so that nothing the
// handshake sends after it goes in another revision's form.
// step names the handshake request a failure belongs to.
func (c *Client) negotiate(ctx context.Context, w *wire) (_ InitResult, step string, _ error) {
	pinned := c.spec.ProtocolVersion
	if pinned != "" && !protocol.IsStateless(pinned) {
		init, err := c.initialize(ctx, w, pinned)
		return init, "initialize", err
	}
	if pinned == "" && c.opts.prefer2025 {
		// A 2025 host: the 2025 handshake first, so that a server of
		// both revisions behaves as it would for the host directly (a
		// server that answered discover takes a later initialize for a
		// duplicate). Only a server that refuses initialize is asked for
		// discover.
		init, err := c.initialize(ctx, w, protocol.Revision2025)
		var rpcErr *jsonrpc.Error
		if err == nil || !errors.As(err, &rpcErr) {
			return init, "initialize", err
		}
		c.logger.Debug("initialize refused; trying server/discover", logkey.Error, err)
		init, err = c.discover(ctx, w)
		return init, protocol.MethodDiscover, err
	}
	probeCtx := ctx
	if pinned == "" {
		var cancel context.CancelFunc
		probeCtx, cancel = context.WithTimeout(ctx, min(c.spec.Timeouts.Connect.D(), discoverProbeMax))
		defer cancel()
	}
	init, err := c.discover(probeCtx, w)
	if err == nil {
		return init, protocol.MethodDiscover, nil
	}
	if pinned != "" || !answer2025(ctx, err) {
		return InitResult{}, protocol.MethodDiscover, err
	}
	c.logger.Debug("no answer to server/discover at the stateless revision; trying initialize", logkey.Error, err)
	init, err = c.initialize(ctx, w, protocol.Revision2025)
	return init, "initialize", err
}

// answer2025 reports whether a failed discover means "a server of an
// older revision" rather than "no server": an error answer (method not
// found, unsupported version, an HTTP status), a discover result without
// the stateless revision, or no answer within the probe while the
// connection lives.
func answer2025(ctx context.Context, err error) bool {
	var rpcErr *jsonrpc.Error
	var tooOld *notStatelessError
	switch {
	case errors.As(err, &rpcErr), errors.As(err, &tooOld):
		return true
	case ctx.Err() != nil:
		return false // the connect timeout, or shutdown: not the probe's
	case errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.Is(err, jsonrpc.ErrClosed), writeFailed(err):
		return false
	}
	// A transport's own failure of the exchange (an HTTP error status).
	return true
}

// notStatelessError is a discover result whose supportedVersions lack the
// stateless revision.
type notStatelessError struct{ supported []string }

func (e *notStatelessError) Error() string {
	return fmt.Sprintf("the server does not support revision %s (it supports %v)", protocol.Stateless, e.supported)
}

// discover runs server/discover; its result says the server speaks the
// stateless revision.
func (c *Client) discover(ctx context.Context, w *wire) (InitResult, error) {
	if vs, ok := w.Transport.(versionSetter); ok {
		// The discover request itself goes with the stateless headers.
		vs.SetProtocolVersion(protocol.Stateless)
	}
	params, err := rawjson.ReplaceReservedMeta(json.RawMessage(`{}`), c.requestMeta(CallOptions{}, nil))
	if err != nil {
		return InitResult{}, err
	}
	raw, err := w.Transport.Call(ctx, protocol.MethodDiscover, params)
	if err != nil {
		return InitResult{}, err
	}
	init, supported, err := parseDiscover(raw)
	if err != nil {
		return InitResult{}, err
	}
	if !slices.Contains(supported, protocol.Stateless) {
		return InitResult{}, &notStatelessError{supported: supported}
	}
	w.settle(init)
	return init, nil
}

// parseDiscover reads a server/discover result: what parseInit reads from
// an initialize result, with the server's name and version in _meta.
func parseDiscover(raw json.RawMessage) (InitResult, []string, error) {
	var r struct {
		Supported []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return InitResult{}, nil, fmt.Errorf("decoding the server/discover result: %w", err)
	}
	init, err := parseInit(raw)
	if err != nil {
		return InitResult{}, nil, fmt.Errorf("decoding the server/discover result: %w", err)
	}
	init.ProtocolVersion = protocol.Stateless
	init.ServerInfo = rawjson.MetaValue(raw, protocol.MetaServerInfo)
	return init, r.Supported, nil
}

// initialize runs the 2025 handshake at version.
func (c *Client) initialize(ctx context.Context, w *wire, version string) (InitResult, error) {
	if vs, ok := w.Transport.(versionSetter); ok {
		vs.SetProtocolVersion("")
	}
	caps := c.opts.capabilities
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	params, err := json.Marshal(struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}{version, caps, c.clientInfo()})
	if err != nil {
		return InitResult{}, err
	}
	raw, err := w.Transport.Call(ctx, "initialize", params)
	if err != nil {
		return InitResult{}, err
	}
	init, err := parseInit(raw)
	if err != nil {
		return InitResult{}, err
	}
	w.settle(init)
	if err := w.Transport.Notify("notifications/initialized", nil); err != nil {
		return InitResult{}, err
	}
	return init, nil
}

func (c *Client) clientInfo() json.RawMessage {
	c.clientInfoOnce.Do(func() {
		c.clientInfoRaw, _ = json.Marshal(map[string]string{"name": "mcptrunk", "version": c.opts.version})
	})
	return c.clientInfoRaw
}

// requestMeta is the _meta every request to a stateless server carries: the
// revision, what the client can be asked (the host's, for a request on its
// behalf), who the client is, and the log level (the host request's, else
// the one logging/setLevel set), with the observer's keys (extra) added.
func (c *Client) requestMeta(opts CallOptions, extra map[string]json.RawMessage) map[string]json.RawMessage {
	caps := opts.Caps
	if len(caps) == 0 {
		caps = c.opts.capabilities
	}
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	meta := map[string]json.RawMessage{
		protocol.MetaProtocolVersion:    json.RawMessage(`"` + protocol.Stateless + `"`),
		protocol.MetaClientCapabilities: caps,
		protocol.MetaClientInfo:         c.clientInfo(),
	}
	if opts.LevelSet {
		if opts.Level != "" {
			b, _ := json.Marshal(opts.Level)
			meta[protocol.MetaLogLevel] = b
		}
	} else if level := c.logLevel.Load(); level != nil {
		meta[protocol.MetaLogLevel] = *level
	}
	addRequestMeta(meta, extra)
	return meta
}
