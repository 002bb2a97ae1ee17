package taskserver

import (
	"encoding/json"
	"net/http"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// NotificationMethod is the extension's status notification, sent on a
// subscriptions/listen stream that named the task in notifications.taskIds.
const NotificationMethod = "notifications/tasks"

// listener is one open subscriptions/listen stream.
type listener struct {
	taskIDs map[string]bool
	out     chan []byte // notifications for the stream; one that finds it full is dropped
}

// listen answers subscriptions/listen: -32021 when it asks for task
// notifications without declaring the extension; else a stream that
// acknowledges the known tasks it names, then carries a notifications/tasks
// (the DetailedTask, as tasks/get would answer then) at each change of
// their status, until the client goes or the server closes (then it
// answers the request).
func (s *Server) listen(w http.ResponseWriter, r *http.Request, req *request) {
	var p struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		writeJSON(w, http.StatusOK, response(req.ID, nil, invalidParams("subscriptions/listen: %v", err)))
		return
	}
	if p.Notifications.TaskIDs != nil && !req.extension {
		writeJSON(w, http.StatusOK, response(req.ID, nil, missingExtension("task notifications")))
		return
	}
	l := &listener{taskIDs: map[string]bool{}, out: make(chan []byte, 64)}
	s.mu.Lock()
	for _, id := range p.Notifications.TaskIDs {
		if s.tasks[id] != nil {
			l.taskIDs[id] = true
		}
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()

	meta := map[string]any{protocol.MetaSubscriptionID: req.ID}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(msg map[string]any) bool {
		b, err := json.Marshal(msg)
		if err != nil {
			return false
		}
		if _, err := w.Write([]byte("event: message\ndata: " + string(b) + "\n\n")); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	ack := map[string]any{"_meta": meta, "notifications": map[string]any{"taskIds": ids(l.taskIDs)}}
	if !send(map[string]any{"jsonrpc": "2.0", "method": protocol.NotificationAcknowledged, "params": ack}) {
		return
	}
	for {
		select {
		case b := <-l.out:
			var params map[string]any
			_ = json.Unmarshal(b, &params)
			params["_meta"] = meta
			if !send(map[string]any{"jsonrpc": "2.0", "method": NotificationMethod, "params": params}) {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			send(response(req.ID, map[string]any{protocol.FieldResultType: protocol.ResultTypeComplete, "_meta": meta}, nil))
			return
		}
	}
}

// notify tells each listen that named the task its state now.
func (s *Server) notify(t *task) {
	b, err := json.Marshal(t.detailed())
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		if !l.taskIDs[t.id] {
			continue
		}
		select {
		case l.out <- b:
		default:
		}
	}
}
