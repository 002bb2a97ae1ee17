package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// At the stateless revision a server sends notifications only on a
// subscriptions/listen request the client holds open: it first acknowledges
// the request with the subset of what was asked that it will send, then
// streams notifications until one side ends it. A Client holds one listen
// per connection for the lists the server says change (opened at connect,
// reopened with backoff when the server ends it) and one per resource
// subscription (opened at resources/subscribe, cancelled at unsubscribe).
//
// The acknowledgement names its listen only by request id, which the
// JSON-RPC connection assigns and does not tell; so the wire opens one
// listen at a time and takes the next acknowledgement as that listen's.

// Listen tuning; variables for tests.
var (
	listenBackoffMin = 250 * time.Millisecond
	listenBackoffMax = 30 * time.Second
	listenStable     = time.Minute // a stream up this long resets the backoff
)

// listenStream is one subscriptions/listen request held open.
type listenStream struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the request has ended
	err    error         // why, once done (nil: the server ended it with a result)
}

// listenFilter is the notifications member of a listen request.
type listenFilter struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs   []string `json:"taskIds,omitempty"` // the tasks extension's status notifications
}

// openListen sends a subscriptions/listen request, told opts, and
// waits, within ctx, for the server to acknowledge it. It returns the stream (which lives on
// until the connection ends or it is cancelled), what the server honored; onEnd runs at its end.
func (w *wire) openListen(ctx context.Context, opts CallOptions, want listenFilter, onEnd func(*listenStream)) (*listenStream, listenFilter, error) {
	w.ackMu.Lock()
	defer w.ackMu.Unlock()
	params, err := json.Marshal(struct {
		Notifications listenFilter `json:"notifications"`
	}{want})
	if err != nil {
		return nil, listenFilter{}, err
	}
	params, err = rawjson.ReplaceReservedMeta(params, w.c.requestMeta(opts, nil))
	if err != nil {
		return nil, listenFilter{}, err
	}
	acks := make(chan json.RawMessage, 1)
	w.mu.Lock()
	w.pending = acks
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.pending = nil
		w.mu.Unlock()
	}()

	sctx, cancel := context.WithCancel(w.life)
	s := &listenStream{cancel: cancel, done: make(chan struct{})}
	w.mu.Lock()
	started := !w.closed
	if started {
		w.streams.Add(1)
		started = w.c.goWorker(func() {
			defer w.streams.Done()
			_, s.err = w.Transport.Call(sctx, protocol.MethodListen, params)
			close(s.done)
			if onEnd != nil {
				onEnd(s)
			}
		})
		if !started {
			w.streams.Done()
		}
	}
	w.mu.Unlock()
	if !started {
		cancel()
		return nil, listenFilter{}, jsonrpc.ErrClosed
	}
	fail := func(err error) (*listenStream, listenFilter, error) {
		cancel()
		<-s.done
		return nil, listenFilter{}, err
	}
	select {
	case ack := <-acks:
		var a struct {
			Notifications listenFilter `json:"notifications"`
		}
		if err := json.Unmarshal(ack, &a); err != nil {
			return fail(fmt.Errorf("decoding the acknowledgement of %s: %w", protocol.MethodListen, err))
		}
		return s, a.Notifications, nil
	case <-s.done:
		if s.err == nil {
			s.err = errors.New("the server ended it before acknowledging it")
		}
		return nil, listenFilter{}, s.err
	case <-ctx.Done():
		return fail(fmt.Errorf("no acknowledgement: %w", ctx.Err()))
	}
}

// acknowledged hands a notifications/subscriptions/acknowledged to the
// listen being opened.
func (w *wire) acknowledged(params json.RawMessage) {
	w.mu.Lock()
	acks := w.pending
	w.pending = nil
	w.mu.Unlock()
	if acks == nil {
		w.c.logger.Debug("an acknowledgement of no listen request being opened", "subscription", string(rawjson.MetaValue(params, protocol.MetaSubscriptionID)))
		return
	}
	acks <- params
}

// watchLists holds a listen open for the lists the server says change,
// while the connection lives. A stream the server ends, or that fails, is
// reopened with backoff, and the lists are read again (changes may have
// been missed in between); a server that refuses the request (an error
// answer) is left alone with a warning.
func (w *wire) watchLists(caps json.RawMessage) {
	want, lists := listChanges(caps)
	if len(lists) == 0 {
		return
	}
	w.c.goWorker(func() {
		backoff := listenBackoffMin
		for first := true; ; first = false {
			wait := w.c.spec.Timeouts.Connect.D()
			if wait <= 0 {
				wait = listenBackoffMax
			}
			ctx, cancel := context.WithTimeout(w.life, wait)
			s, honored, err := w.openListen(ctx, CallOptions{}, want, nil) // the Fleet's capabilities
			cancel()
			if err == nil {
				w.c.logger.Debug("listening for list changes", "honored", fmt.Sprintf("%+v", honored))
				if !first {
					w.c.markDirty(lists...)
				}
				opened := time.Now()
				<-s.done
				err = s.err
				if time.Since(opened) >= listenStable {
					backoff = listenBackoffMin
				}
				if err == nil {
					err = errors.New("the server ended it")
				}
			}
			if w.life.Err() != nil {
				return
			}
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				w.c.logger.Warn("the server refused to send list changes; its lists are read only at connect", logkey.Error, err)
				return
			}
			w.c.logger.Warn("listening for list changes failed; listening again", logkey.Error, err, "in", backoff)
			select {
			case <-time.After(backoff):
			case <-w.life.Done():
				return
			}
			backoff = min(backoff*2, listenBackoffMax)
		}
	})
}

// listChanges reads which lists a server's capabilities say change.
func listChanges(caps json.RawMessage) (listenFilter, []surface) {
	var c struct {
		Tools, Prompts, Resources *struct {
			ListChanged bool `json:"listChanged"`
		}
	}
	_ = json.Unmarshal(caps, &c)
	var f listenFilter
	var lists []surface
	if c.Tools != nil && c.Tools.ListChanged {
		f.Tools = true
		lists = append(lists, surfaceTools)
	}
	if c.Prompts != nil && c.Prompts.ListChanged {
		f.Prompts = true
		lists = append(lists, surfacePrompts)
	}
	if c.Resources != nil && c.Resources.ListChanged {
		f.Resources = true
		lists = append(lists, surfaceResources, surfaceTemplates)
	}
	return f, lists
}

// subscribe stands in for resources/subscribe: a listen for the one URI,
// answered once the server has acknowledged it.
func (w *wire) subscribe(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	uri, err := rawjson.StringField(params, "uri")
	if err != nil || uri == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: resources/subscribe: params need a uri", w.c.id)
	}
	w.mu.Lock()
	_, have := w.subs[uri]
	w.mu.Unlock()
	if have {
		return json.RawMessage(`{}`), nil
	}
	s, honored, err := w.openListen(ctx, CallOptions{}, listenFilter{URIs: []string{uri}}, func(s *listenStream) { w.subscriptionEnded(uri, s) })
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return nil, jsonrpc.Errorf(rpcErr.Code, "server %q: subscribing to %q: %s", w.c.id, uri, rpcErr.Message)
		}
		return nil, fmt.Errorf("subscribing to %q: %w", uri, err)
	}
	if !slices.Contains(honored.URIs, uri) {
		s.cancel()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q does not offer updates of %q", w.c.id, uri)
	}
	w.mu.Lock()
	if _, have := w.subs[uri]; have {
		s.cancel() // a concurrent subscribe won
	} else {
		w.subs[uri] = s
	}
	w.mu.Unlock()
	return json.RawMessage(`{}`), nil
}

// listenTasks holds a listen open for the status of the server's tasks ids, told opts (whose
// capabilities declare the extension): the ids the server will report on, and stop. The
// listen is a request in flight while it is open, so an idle timeout does not end it; when it
// ends other than by stop (the server ends it, the connection is lost), ended gets why.
func (c *Client) listenTasks(ctx context.Context, opts CallOptions, ids []string) (honored []string, stop func(), ended <-chan error, _ error) {
	w, err := c.acquire(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	release, stopped, why := sync.OnceFunc(c.release), new(atomic.Bool), make(chan error, 1)
	s, h, err := w.openListen(ctx, opts, listenFilter{TaskIDs: ids}, func(s *listenStream) {
		release()
		if stopped.Load() {
			return
		}
		err := s.err
		switch {
		case w.life.Err() != nil:
			err = errors.New("the connection ended")
		case err == nil:
			err = errors.New("the server ended it")
		}
		why <- fmt.Errorf("server %q stopped reporting on its tasks: %w", c.id, err)
	})
	if err != nil {
		stopped.Store(true)
		release()
		return nil, nil, nil, err
	}
	return h.TaskIDs, func() { stopped.Store(true); s.cancel() }, why, nil
}

// subscriptionEnded forgets a subscription's stream once it has ended; one
// the server ended is reported, and a later subscribe opens a new one.
func (w *wire) subscriptionEnded(uri string, s *listenStream) {
	w.mu.Lock()
	current := w.subs[uri] == s
	if current {
		delete(w.subs, uri)
	}
	w.mu.Unlock()
	if current && w.life.Err() == nil {
		w.c.logger.Warn("the server ended a resource subscription", "uri", logkey.Clip(uri), logkey.Error, s.err)
	}
}

// unsubscribe stands in for resources/unsubscribe: the URI's listen ends.
func (w *wire) unsubscribe(params json.RawMessage) (json.RawMessage, error) {
	uri, err := rawjson.StringField(params, "uri")
	if err != nil || uri == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "server %q: resources/unsubscribe: params need a uri", w.c.id)
	}
	w.mu.Lock()
	s := w.subs[uri]
	delete(w.subs, uri)
	w.mu.Unlock()
	if s != nil {
		s.cancel()
	}
	return json.RawMessage(`{}`), nil
}

// goWorker runs fn on a goroutine Close waits for; false (fn not run) once
// the Client is closed.
func (c *Client) goWorker(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateClosed {
		return false
	}
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		fn()
	}()
	return true
}
