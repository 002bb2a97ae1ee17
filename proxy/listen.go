package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// At the stateless revision a host hears of changes only through the
// subscriptions/listen requests it keeps open: each names the list changes
// and resource URIs it wants, and every notification for it carries its
// request id as _meta subscriptionId. The listens registry holds the open
// ones, and the Server's Notify routes list_changed and resources/updated to
// them (and nowhere else), so the announcer and forwardNotification work as
// they do for a 2025-era host.
//
// list_changed still goes out only for lists the host has read (the
// announcer's rule): a host that never read a list has no copy to be stale.

// listenRelease bounds the upstream unsubscribe when a listen ends.
const listenRelease = 5 * time.Second

// listen is one open subscriptions/listen request.
type listen struct {
	id      json.RawMessage // the request's id, the subscriptionId
	changed map[string]bool // the list_changed notifications it wants
	uris    map[string]bool // the namespaced URIs it is subscribed to
}

// listens is the registry of open listens, and the reference count of the
// upstream subscriptions they share (two listens on one URI are one
// subscription upstream, ended with the last of them).
type listens struct {
	mu   sync.Mutex
	open map[*listen]bool

	subMu sync.Mutex     // serialises subscribing and unsubscribing upstream
	refs  map[string]int // namespaced URI -> open listens subscribed to it

	active   sync.WaitGroup // listen handlers that are waiting
	done     chan struct{}  // closed at shutdown: every listen is answered
	doneOnce sync.Once
}

func newListens() *listens {
	return &listens{open: map[*listen]bool{}, refs: map[string]int{}, done: make(chan struct{})}
}

// shutdown answers every open listen (the trunk is tearing it down) and
// waits for their handlers to return.
func (ls *listens) shutdown() {
	ls.doneOnce.Do(func() { close(ls.done) })
	ls.active.Wait()
}

// listenParams are subscriptions/listen's params.
type listenParams struct {
	Notifications struct {
		Tools     bool     `json:"toolsListChanged"`
		Prompts   bool     `json:"promptsListChanged"`
		Resources bool     `json:"resourcesListChanged"`
		URIs      []string `json:"resourceSubscriptions"`
	} `json:"notifications"`
}

// honored is the acknowledged subset: what the trunk will deliver.
type honored struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
}

func (h honored) empty() bool { return !h.Tools && !h.Prompts && !h.Resources && len(h.URIs) == 0 }

// listen handles subscriptions/listen: it subscribes upstream to each URI
// asked for, acknowledges what it will deliver, and then stays open until
// the host cancels it or the trunk shuts down. Every list change is
// honoured (the trunk announces them all); a URI only when its server
// accepted the subscription. A listen that ends up with nothing to deliver
// is answered at once.
func (s *Server) listen(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	id := jsonrpc.RequestID(ctx)
	if id == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: the request has no id", protocol.MethodListen)
	}
	var p listenParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.notifications must be an object of booleans (%s, %s, %s) and a %s array of URIs",
			protocol.MethodListen, protocol.ListenToolsListChanged, protocol.ListenPromptsListChanged, protocol.ListenResourcesChanged, protocol.ListenResourceSubscribers)
	}
	ls := s.listens
	ls.active.Add(1)
	defer ls.active.Done()

	n := p.Notifications
	h := honored{Tools: n.Tools, Prompts: n.Prompts, Resources: n.Resources}
	l := &listen{id: id, changed: map[string]bool{}, uris: map[string]bool{}}
	for _, list := range []struct {
		on     bool
		method string
	}{{n.Tools, "notifications/tools/list_changed"}, {n.Prompts, "notifications/prompts/list_changed"}, {n.Resources, "notifications/resources/list_changed"}} {
		if list.on {
			l.changed[list.method] = true
		}
	}
	for _, uri := range n.URIs {
		if l.uris[uri] {
			continue
		}
		if err := s.acquire(ctx, uri); err != nil {
			s.logger.Info("a listen's resource subscription was refused", "uri", uri, "error", err)
			continue
		}
		l.uris[uri] = true
		h.URIs = append(h.URIs, uri)
	}
	defer func() {
		for uri := range l.uris {
			s.release(uri)
		}
	}()

	if err := s.acknowledge(l, h); err != nil {
		return nil, err
	}
	if !h.empty() {
		select {
		case <-ctx.Done(): // the host cancelled it, or went away: no answer is sent
		case <-ls.done:
		}
	}
	ls.mu.Lock()
	delete(ls.open, l)
	ls.mu.Unlock()
	return json.Marshal(map[string]any{
		protocol.FieldResultType: protocol.ResultTypeComplete,
		"_meta":                  map[string]json.RawMessage{protocol.MetaSubscriptionID: id},
	})
}

// acknowledge registers l and queues notifications/subscriptions/acknowledged
// under the registry's lock, so that no notification for l can reach the
// host before it.
func (s *Server) acknowledge(l *listen, h honored) error {
	params, _ := json.Marshal(map[string]any{
		"_meta":         map[string]json.RawMessage{protocol.MetaSubscriptionID: l.id},
		"notifications": h,
	})
	size := jsonrpc.NotificationLen(protocol.NotificationAcknowledged, params)
	if err := s.conn.CheckSize(size); err != nil {
		return err
	}
	ls := s.listens
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.open[l] = true
	// Never dropped, like list_changed: the host waits for it.
	if err := s.out.push(outboxNote{method: protocol.NotificationAcknowledged, params: params, size: int64(size)}); err != nil {
		delete(ls.open, l)
		return err
	}
	return nil
}

// acquire subscribes upstream to a namespaced URI for a listen, unless
// another listen already has.
func (s *Server) acquire(ctx context.Context, uri string) error {
	ls := s.listens
	ls.subMu.Lock()
	defer ls.subMu.Unlock()
	if ls.refs[uri] == 0 {
		if _, err := s.trunk.Handle(ctx, "resources/subscribe", uriParams(uri)); err != nil {
			return err
		}
	}
	ls.refs[uri]++
	return nil
}

// release ends a listen's share of an upstream subscription, and the
// subscription with the last share. At shutdown there is nothing to end:
// the upstreams are closing.
func (s *Server) release(uri string) {
	ls := s.listens
	ls.subMu.Lock()
	defer ls.subMu.Unlock()
	if ls.refs[uri]--; ls.refs[uri] > 0 {
		return
	}
	delete(ls.refs, uri)
	select {
	case <-ls.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(withHostRequest(context.Background(), hostRequest{version: protocol.Stateless}), listenRelease)
	defer cancel()
	if _, err := s.trunk.Handle(ctx, "resources/unsubscribe", uriParams(uri)); err != nil {
		s.logger.Debug("ending a listen's resource subscription failed", "uri", uri, "error", err)
	}
}

func uriParams(uri string) json.RawMessage {
	out, _ := json.Marshal(map[string]string{"uri": uri})
	return out
}

// route finds where a notification goes for a host at the stateless
// revision: list_changed and resources/updated to the listens that asked
// for them, each with its subscriptionId (routed is true, and none may
// want it). Every other notification is not the registry's (routed false).
func (ls *listens) route(method string, params json.RawMessage) (out []json.RawMessage, routed bool) {
	var uri string
	switch {
	case strings.HasSuffix(method, "/list_changed") && method != "notifications/roots/list_changed":
	case method == "notifications/resources/updated":
		uri, _ = rawjson.StringField(params, "uri")
	default:
		return nil, false
	}
	ls.mu.Lock()
	var ids []json.RawMessage
	for l := range ls.open {
		if (uri == "" && l.changed[method]) || (uri != "" && l.uris[uri]) {
			ids = append(ids, l.id)
		}
	}
	ls.mu.Unlock()
	for _, id := range ids {
		p, err := rawjson.ReplaceReservedMeta(params, map[string]json.RawMessage{protocol.MetaSubscriptionID: id})
		if err != nil {
			continue // not an object: no listen can be told of it
		}
		out = append(out, p)
	}
	return out, true
}
