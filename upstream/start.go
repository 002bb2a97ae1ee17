package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/upstream/listpage"
	"github.com/mcptrunk/mcptrunk/upstream/transport/remote"
	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio"
)

// InitResult is what a server said about itself in its initialize response,
// or at the stateless revision in its server/discover result (ProtocolVersion
// is then protocol.Stateless, ServerInfo from the result's _meta).
type InitResult struct {
	ProtocolVersion string
	Capabilities    Capabilities
	// RawCapabilities, ServerInfo: exactly as sent.
	RawCapabilities json.RawMessage
	ServerInfo      json.RawMessage
	Instructions    string
}

// Capabilities are the server capabilities the trunk acts on.
type Capabilities = protocol.ServerCaps

// start makes the first attempt to connect, handshake and run phase A of
// discovery (tools); phase B (prompts, resources, templates) continues in
// the background and Settled closes when it is done. It then hands the
// server to its supervisor, which notices when it goes away and restarts
// it under the Fleet's RestartPolicy. A failed first attempt is returned,
// and leaves the Client failed or, when a restart is due, restarting.
//
// A lazy server with a cached catalog is not started at all (lazy.go).
func (c *Client) start(ctx context.Context) error {
	if c.spec.Disabled {
		return nil
	}
	if c.spec.Lazy && c.fromCache() {
		return nil
	}
	// The first connection is in transition until its supervisor has it:
	// a stop that comes meanwhile (its catalog cached, its idle timeout)
	// waits, then waits for that supervisor to see the connection end as a
	// sleep. Otherwise a supervisor handed the connection after the stop
	// could find it ended only once a wake had made the server ready again,
	// and take the stop for a loss.
	c.transition.Lock()
	err := c.attempt(ctx)
	var decided chan struct{}
	c.mu.Lock()
	if c.state != StateClosed {
		if err != nil {
			decided = make(chan struct{})
		}
		c.startSupervisorLocked(err, decided)
	}
	c.mu.Unlock()
	c.transition.Unlock()
	if err != nil {
		if decided != nil {
			// The failure is recorded (failed or restarting) before the
			// caller hears of it: Fleet.Failures right after StartAll sees it.
			<-decided
		}
		c.settle()
	}
	return err
}

// invalid logs and returns the failure of a server whose entry cannot be
// used, as attempt does a failed start.
func (c *Client) invalid() error {
	err := fmt.Errorf("server %q: %w", c.id, c.spec.Invalid)
	c.logger.Error("server failed to start", logkey.Error, err)
	return err
}

// attempt is one try at connecting; a failure is logged and returned with
// the server's name.
func (c *Client) attempt(ctx context.Context) error {
	err := c.connect(ctx)
	if err != nil {
		err = fmt.Errorf("server %q: %w", c.id, err)
		c.logger.Error("server failed to start", logkey.Error, err)
	}
	return err
}

func (c *Client) connect(ctx context.Context) error {
	t := newWire(c)
	raw, err := c.dial(clientHandler{c, t})
	if err != nil {
		t.end()
		return err
	}
	t.Transport = raw
	c.mu.Lock()
	if c.state == StateClosed {
		c.mu.Unlock()
		_ = t.Close(context.Background())
		return errors.New("shut down while starting")
	}
	c.t = t
	c.dirty = [surfaceCount]bool{} // only what this connection announces counts
	c.announced = [surfaceCount]bool{}
	c.lazy.subs = nil
	c.mu.Unlock()

	connectCtx, cancel := context.WithTimeout(ctx, c.spec.Timeouts.Connect.D())
	defer cancel()
	init, step, err := c.negotiate(connectCtx, t)
	if err != nil {
		err = c.startError(connectCtx, t, step, c.spec.Timeouts.Connect.D(), "connect", err)
		closeCtx := context.WithoutCancel(ctx)
		if connectCtx.Err() != nil {
			// It never answered within timeouts.connect: stopped at once,
			// so that the failure is reported when the timeout says, not
			// after the grace a server that answers gets to leave.
			var stop context.CancelFunc
			closeCtx, stop = context.WithCancel(closeCtx)
			stop()
		}
		_ = t.Close(closeCtx)
		return err
	}
	rev := t.revision() // negotiate settled it
	// Before the lists are read, so a change while they are is not missed.
	rev.ready(t, init.RawCapabilities)
	var tools []Item
	if init.Capabilities.Tools {
		listCtx, cancel := context.WithTimeout(ctx, c.spec.Timeouts.List.D())
		defer cancel()
		tools, err = c.list(listCtx, t, surfaceTools)
		if err != nil {
			err = c.startError(listCtx, t, "tools/list", c.spec.Timeouts.List.D(), "list", err)
			_ = t.Close(context.WithoutCancel(ctx))
			return err
		}
	}

	c.mu.Lock()
	if c.state == StateClosed {
		c.mu.Unlock()
		return errors.New("shut down while starting")
	}
	c.init = init
	c.catalog.Tools = tools
	// A woken server still lists its cached prompts and resources until
	// phase B reads them again; those it no longer offers go now.
	if !init.Capabilities.Prompts {
		c.catalog.Prompts = nil
	}
	if !init.Capabilities.Resources {
		c.catalog.Resources, c.catalog.Templates = nil, nil
	}
	c.mu.Unlock()
	c.logger.Info("server ready", "tools", len(tools), "protocol", init.ProtocolVersion, "stateless", init.stateless())
	c.setState(StateReady, nil)
	c.armIdle()

	// Phase B: the other lists, in the background; the first refresh that
	// finishes settles the Client. A tools/list_changed that came while
	// phase A ran may announce a list newer than the one read: read it again.
	var later []surface
	c.mu.Lock()
	if c.dirty[surfaceTools] && init.Capabilities.Tools {
		later = append(later, surfaceTools)
	}
	c.mu.Unlock()
	if init.Capabilities.Prompts {
		later = append(later, surfacePrompts)
	}
	if init.Capabilities.Resources {
		later = append(later, surfaceResources, surfaceTemplates)
	}
	if !c.markDirty(later...) {
		c.discovered(true)
		c.settle()
	}
	return nil
}

// startError turns a failed startup step into an error that says which
// step, which timeout, how the process ended if it did, and the first
// line it wrote that was not JSON-RPC if it wrote one (most often why it
// never answered: a banner or a log line on stdout).
func (c *Client) startError(ctx context.Context, t Transport, step string, timeout time.Duration, timeoutName string, err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("%s: server answered with an error: %w", step, err)
	}
	err = c.startCause(ctx, t, step, timeout, timeoutName, err)
	if l, ok := t.(invalidLiner); ok {
		if line := l.FirstInvalidLine(); line != "" {
			return fmt.Errorf("%w; it wrote a line that is not JSON-RPC: %q", err, line)
		}
	}
	return err
}

// invalidLiner is a transport that keeps the first line its server wrote
// that was not JSON-RPC (stdio).
type invalidLiner interface{ FirstInvalidLine() string }

// FirstInvalidLine is the transport's, "" for a transport that keeps none.
func (w *wire) FirstInvalidLine() string {
	if l, ok := w.Transport.(invalidLiner); ok {
		return l.FirstInvalidLine()
	}
	return ""
}

// startCause says why a startup step failed other than by the server's
// error answer.
func (c *Client) startCause(ctx context.Context, t Transport, step string, timeout time.Duration, timeoutName string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return fmt.Errorf("%s: no answer within %v (timeouts.%s)", step, timeout, timeoutName)
	case errors.Is(err, jsonrpc.ErrClosed):
		return fmt.Errorf("%s: %w", step, c.exitError(t))
	case writeFailed(err):
		// A server that exits at once can fail the write of initialize
		// before the read side notices: say how it ended if it did.
		if exit := c.exitError(t); exit != nil {
			return fmt.Errorf("%s: %w", step, exit)
		}
	}
	return fmt.Errorf("%s: %w", step, err)
}

func (c *Client) dial(h clientHandler) (Transport, error) {
	if c.opts.dial != nil {
		return c.opts.dial(c.spec, h)
	}
	switch c.spec.Type {
	case config.TransportStdio, "":
		return stdio.Start(stdio.Command{Path: c.spec.Command, Args: c.spec.Args, Env: c.spec.Env, Dir: c.spec.Cwd}, h, c.logger, c.connOptions())
	case config.TransportHTTP:
		return remote.StartStreamable(remoteEndpoint(c.spec, c.id, c.opts.version, c.opts.authorization), h, c.logger, c.connOptions())
	case config.TransportSSE:
		return remote.StartSSE(remoteEndpoint(c.spec, c.id, c.opts.version, c.opts.authorization), h, c.logger, c.connOptions())
	default:
		return nil, fmt.Errorf("transport %q is not supported yet", c.spec.Type)
	}
}

func parseInit(raw json.RawMessage) (InitResult, error) {
	var r struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return InitResult{}, fmt.Errorf("decoding initialize result: %w", err)
	}
	caps, err := protocol.ParseServerCaps(r.Capabilities)
	if err != nil {
		return InitResult{}, fmt.Errorf("decoding initialize result: capabilities: %w", err)
	}
	return InitResult{
		ProtocolVersion: r.ProtocolVersion,
		Capabilities:    caps,
		RawCapabilities: r.Capabilities,
		ServerInfo:      r.ServerInfo,
		Instructions:    r.Instructions,
	}, nil
}

// list reads every page of one list.
func (c *Client) list(ctx context.Context, t Transport, s surface) ([]Item, error) {
	var items []Item
	seen := map[string]bool{}
	var params json.RawMessage
	for page := 0; ; page++ {
		if page == listpage.MaxPages {
			return nil, fmt.Errorf("%s: more than %d pages", surfaces[s].method, listpage.MaxPages)
		}
		raw, err := t.Call(ctx, surfaces[s].method, params)
		if err != nil {
			return nil, err
		}
		p, err := listpage.Parse(surfaces[s].method, surfaces[s].field, raw)
		if err != nil {
			return nil, err
		}
		for _, it := range p.Items {
			key, err := itemKey(s, it)
			if err != nil {
				c.logger.Warn("skipping a list entry", "list", s.String(), logkey.Error, err)
				continue
			}
			items = append(items, Item{Key: key, Raw: it})
		}
		if p.NextCursor == "" {
			return items, nil
		}
		if seen[p.NextCursor] {
			return nil, fmt.Errorf("%s: the server repeated cursor %q", surfaces[s].method, p.NextCursor)
		}
		seen[p.NextCursor] = true
		params, _ = json.Marshal(map[string]string{"cursor": p.NextCursor})
	}
}

// listChanged reads lists again because the server said they changed: the
// read counts in Catalog.Relisted even if the list reads the same.
func (c *Client) listChanged(lists ...surface) {
	c.mu.Lock()
	for _, s := range lists {
		c.announced[s] = true
	}
	c.mu.Unlock()
	c.markDirty(lists...)
}

// markDirty asks for lists to be read again, starting a refresh worker if
// none runs. It reports whether a refresh will happen (false when the list
// is empty or the server is not ready).
func (c *Client) markDirty(lists ...surface) bool {
	if len(lists) == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateReady {
		if c.state == StateStarting || c.state == StateRestarting || c.state == StateSleeping {
			// Discovery is under way: connect acts on it once ready.
			for _, s := range lists {
				c.dirty[s] = true
			}
		}
		return false
	}
	for _, s := range lists {
		c.dirty[s] = true
	}
	if !c.refreshing {
		c.refreshing = true
		c.workers.Add(1)
		go c.refresh()
	}
	return true
}

// refresh re-reads dirty lists until none is left. A burst of list_changed
// notifications marks the same lists dirty again and again while one read is
// under way; they cost one more read, not one each.
//
// Once no list is left to read, the catalog is cached (discovered).
func (c *Client) refresh() {
	defer c.workers.Done()
	defer c.settle()
	complete := true
	for {
		c.mu.Lock()
		dirty, announced := c.dirty, c.announced
		c.dirty, c.announced = [surfaceCount]bool{}, [surfaceCount]bool{}
		t := c.t
		if dirty == ([surfaceCount]bool{}) || c.state != StateReady {
			ready := c.state == StateReady
			c.refreshing = false
			c.mu.Unlock()
			if ready {
				c.discovered(complete)
			}
			return
		}
		c.mu.Unlock()

		changed := false
		for s, want := range dirty {
			if !want {
				continue
			}
			ctx, cancel := context.WithTimeout(c.life, c.spec.Timeouts.List.D())
			items, err := c.list(ctx, t, surface(s))
			cancel()
			if err != nil {
				c.logger.Warn("reading a list failed", "list", surface(s).String(), logkey.Error, err)
				complete = false
				continue
			}
			c.mu.Lock()
			if c.state == StateReady {
				*c.catalog.list(surface(s)) = items
				if announced[s] {
					c.relisted[s]++
				}
				changed = true
			}
			c.mu.Unlock()
		}
		if changed {
			c.changed()
		}
	}
}

// clientHandler answers what the server sends on its own initiative on
// one connection.
type clientHandler struct {
	c *Client
	w *wire
}

func (h clientHandler) HandleNotification(method string, params json.RawMessage) {
	switch method {
	case protocol.NotificationAcknowledged:
		h.w.acknowledged(params)
	case "notifications/tools/list_changed":
		h.c.listChanged(surfaceTools)
	case "notifications/prompts/list_changed":
		h.c.listChanged(surfacePrompts)
	case "notifications/resources/list_changed":
		h.c.listChanged(surfaceResources, surfaceTemplates)
	default:
		if f := h.c.opts.events.Notification; f != nil {
			f(h.c.id, method, params)
		}
	}
}

func (h clientHandler) HandleRequest(ctx context.Context, req jsonrpc.Request) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	if method == "ping" {
		return json.RawMessage(`{}`), nil
	}
	if f := h.c.opts.events.Request; f != nil {
		return f(ctx, h.c.id, method, params)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q is not supported by mcptrunk", method)
}

// connOptions bounds what is read from the server by trunk.maxMessageBytes
// (Options.MaxMessageBytes): one over-long line or event fails the call
// it answers, or is logged, and a server that writes without end is
// restarted (see internal/jsonrpc's lines.go), never the whole trunk.
func (c *Client) connOptions() jsonrpc.Options {
	n := c.opts.maxMessage
	if n <= 0 {
		return jsonrpc.Options{}
	}
	return jsonrpc.Options{MaxReadBytes: n, ReadLimitSetting: "trunk.maxMessageBytes", ResyncBytes: jsonrpc.ResyncBytes(n)}
}
