package translate

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
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

// listen is one open subscriptions/listen request.
type listen struct {
	id      json.RawMessage // the request's id, the subscriptionId
	changed map[string]bool // the list_changed notifications it wants
	uris    map[string]bool // the namespaced URIs it is subscribed to
	tasks   map[string]bool // the tasks (by the ids the host knows) whose status it wants
}

// ListenSession is what a listen needs of the session it came on.
type ListenSession interface {
	// Acquire takes a share of the upstream subscription to a namespaced
	// URI (shared with every other listen and session on it); Release
	// gives it up, ending nothing upstream at shutdown.
	Acquire(ctx context.Context, uri string) error
	Release(uri string, shutdown bool)
	// CheckSize says why a notification of size bytes cannot reach the
	// host; Push queues one that is never dropped.
	CheckSize(size int) error
	Push(method string, params json.RawMessage, size int) error
	// WatchTask has the server of the task the host knows as id report
	// its status (the tasks extension's notifications/tasks) until stop;
	// ended gets why the server stopped reporting before that. An error
	// leaves the id out of the acknowledgement; -32021 (the host did not
	// declare the extension) refuses the listen.
	WatchTask(ctx context.Context, id string) (stop func(), ended <-chan error, err error)
}

// Listens is the registry of one host's open listens. The upstream
// subscriptions they need are counted by the trunk (ListenSession, and
// proxy/shared.go): two listens on one URI are one subscription upstream.
type Listens struct {
	mu   sync.Mutex
	open map[*listen]bool

	active   sync.WaitGroup    // listen handlers that are waiting
	answers  []<-chan struct{} // listens ended by shutdown: closed once each answer is written
	done     chan struct{}     // closed at shutdown: every listen is answered
	doneOnce sync.Once
}

// NewListens returns an empty registry, for one host session.
func NewListens() *Listens {
	return &Listens{open: map[*listen]bool{}, done: make(chan struct{})}
}

// Shutdown answers every open listen (the trunk is tearing it down) and
// waits for their handlers to return.
func (ls *Listens) Shutdown() {
	ls.doneOnce.Do(func() { close(ls.done) })
	ls.active.Wait()
	// Their answers are written after the handlers return: wait for them,
	// or the host could miss them as the trunk goes.
	ls.mu.Lock()
	answers := ls.answers
	ls.mu.Unlock()
	deadline := time.NewTimer(listenAnswerWait)
	defer deadline.Stop()
	for _, ch := range answers {
		select {
		case <-ch:
		case <-deadline.C:
			return
		}
	}
}

// taskNotification is the tasks extension's status notification.
const taskNotification = "notifications/tasks"

// listenAnswerWait bounds the wait for the answers of the listens ended at
// shutdown (a host that does not read cannot hold the trunk up).
const listenAnswerWait = 2 * time.Second

// listenParams are subscriptions/listen's params.
type listenParams struct {
	Notifications struct {
		Tools     bool     `json:"toolsListChanged"`
		Prompts   bool     `json:"promptsListChanged"`
		Resources bool     `json:"resourcesListChanged"`
		URIs      []string `json:"resourceSubscriptions"`
		TaskIDs   []string `json:"taskIds"`
	} `json:"notifications"`
}

// honored is the acknowledged subset: what the trunk will deliver.
type honored struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs   []string `json:"taskIds,omitempty"`
}

func (h honored) empty() bool {
	return !h.Tools && !h.Prompts && !h.Resources && len(h.URIs) == 0 && len(h.TaskIDs) == 0
}

// Listen handles subscriptions/listen: it subscribes upstream to each URI
// asked for, acknowledges what it will deliver, and then stays open until
// the host cancels it or the trunk shuts down. Every list change is
// honoured (the trunk announces them all); a URI only when its server
// accepted the subscription. A listen that ends up with nothing to deliver
// is answered at once. One whose task's server stops reporting on it (its
// listen ended: a crash, a reload) ends with an error saying so, rather
// than stay open hearing nothing of the task: the host asks tasks/get, and
// may listen again.
//
// id is the request's id (the subscriptionId), answered is closed once its
// answer is written, and sess is the session it came on.
func (ls *Listens) Listen(ctx context.Context, id json.RawMessage, answered <-chan struct{}, params json.RawMessage, sess ListenSession, logger *slog.Logger) (json.RawMessage, error) {
	if id == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: the request has no id", protocol.MethodListen)
	}
	var p listenParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.notifications must be an object of booleans (%s, %s, %s) and a %s array of URIs",
			protocol.MethodListen, protocol.ListenToolsListChanged, protocol.ListenPromptsListChanged, protocol.ListenResourcesChanged, protocol.ListenResourceSubscribers)
	}
	ls.active.Add(1)
	defer ls.active.Done()

	n := p.Notifications
	h := honored{Tools: n.Tools, Prompts: n.Prompts, Resources: n.Resources}
	l := &listen{id: id, changed: map[string]bool{}, uris: map[string]bool{}, tasks: map[string]bool{}}
	quit, lost := make(chan struct{}), make(chan error, 1)
	defer close(quit)
	stops, err := ls.watchTasks(ctx, sess, l, n.TaskIDs, &h, watchEnds{quit, lost}, logger)
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	if err != nil {
		return nil, err
	}
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
		if err := sess.Acquire(ctx, uri); err != nil {
			logger.Info("a listen's resource subscription was refused", "uri", logkey.Clip(uri), "error", err)
			continue
		}
		l.uris[uri] = true
		h.URIs = append(h.URIs, uri)
	}
	defer func() {
		for uri := range l.uris {
			sess.Release(uri, ls.shuttingDown())
		}
	}()

	if err := ls.acknowledge(sess, l, h); err != nil {
		return nil, err
	}
	var ended error
	if !h.empty() {
		select {
		case <-ctx.Done(): // the host cancelled it, or went away: no answer is sent
		case ended = <-lost:
		case <-ls.done:
			if answered != nil {
				ls.mu.Lock()
				ls.answers = append(ls.answers, answered)
				ls.mu.Unlock()
			}
		}
	}
	ls.mu.Lock()
	delete(ls.open, l)
	ls.mu.Unlock()
	if ended != nil {
		return nil, ended
	}
	return json.Marshal(map[string]any{
		protocol.FieldResultType: protocol.ResultTypeComplete,
		"_meta":                  map[string]json.RawMessage{protocol.MetaSubscriptionID: id},
	})
}

// watchEnds is where the end of a task's report goes (lost: the first
// one) until the listen ends (quit).
type watchEnds struct {
	quit <-chan struct{}
	lost chan<- error
}

// watch passes on, as the listen's error, that the server of the task the
// host knows as id stopped reporting on it.
func (w watchEnds) watch(id string, ended <-chan error) {
	select {
	case err := <-ended:
		select {
		case w.lost <- jsonrpc.Errorf(jsonrpc.CodeUnavailable, "%s: the status of task %q is no longer reported (%v): tasks/get tells where it is, and a new listen asks again", protocol.MethodListen, id, err):
		default:
		}
	case <-w.quit:
	}
}

// watchTasks has the servers report the status of each task asked for,
// recording in l the ids the host knows them by; -32021 refuses the listen.
func (ls *Listens) watchTasks(ctx context.Context, sess ListenSession, l *listen, ids []string, h *honored, ends watchEnds, logger *slog.Logger) (stops []func(), _ error) {
	for _, id := range ids {
		stop, ended, err := sess.WatchTask(ctx, id)
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code == protocol.CodeMissingClientCapabilities {
			return stops, err
		}
		if err != nil {
			logger.Info("a listen's task status was refused", "error", err)
			continue
		}
		stops = append(stops, stop)
		go ends.watch(id, ended)
		l.tasks[id] = true
		h.TaskIDs = append(h.TaskIDs, id)
	}
	return stops, nil
}

// acknowledge registers l and queues notifications/subscriptions/acknowledged
// under the registry's lock, so that no notification for l can reach the
// host before it.
func (ls *Listens) acknowledge(sess ListenSession, l *listen, h honored) error {
	params, _ := json.Marshal(map[string]any{
		"_meta":         map[string]json.RawMessage{protocol.MetaSubscriptionID: l.id},
		"notifications": h,
	})
	size := jsonrpc.NotificationLen(protocol.NotificationAcknowledged, params)
	if err := sess.CheckSize(size); err != nil {
		return err
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.open[l] = true
	// Never dropped, like list_changed: the host waits for it.
	if err := sess.Push(protocol.NotificationAcknowledged, params, size); err != nil {
		delete(ls.open, l)
		return err
	}
	return nil
}

// shuttingDown reports whether the listens are being ended by shutdown:
// then there is nothing to end upstream, the upstreams are closing.
func (ls *Listens) shuttingDown() bool {
	select {
	case <-ls.done:
		return true
	default:
		return false
	}
}

// Route finds where a notification goes for a host at the stateless
// revision: list_changed and resources/updated to the listens that asked
// for them, and the tasks extension's notifications/tasks (its taskId the
// host's) to the listens that named the task, each with its subscriptionId
// (routed is true, and none may want it). Every other notification is not
// the registry's (routed false).
func (ls *Listens) Route(method string, params json.RawMessage) (out []json.RawMessage, routed bool) {
	var uri, task string
	switch {
	case strings.HasSuffix(method, "/list_changed") && method != "notifications/roots/list_changed":
	case method == "notifications/resources/updated":
		uri, _ = rawjson.StringField(params, "uri")
	case method == taskNotification:
		if task, _ = rawjson.StringField(params, "taskId"); task == "" {
			return nil, true
		}
	default:
		return nil, false
	}
	ls.mu.Lock()
	var ids []json.RawMessage
	for l := range ls.open {
		if (uri == "" && task == "" && l.changed[method]) || (uri != "" && l.uris[uri]) || (task != "" && l.tasks[task]) {
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
