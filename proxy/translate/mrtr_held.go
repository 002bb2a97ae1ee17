package translate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// A 2025-11-25 server asks for a task's input (elicitation, sampling) by
// requests on its connection that name the task in their related-task
// _meta, and only while its client waits on tasks/result. A 2026-07-28
// host never sends tasks/result: it polls tasks/get, which lists the
// task's inputRequests, and answers them with tasks/update. So the trunk
// sends tasks/result itself, as an exchange no host request waits on
// (Hold): the server's requests during it are parked as during any
// exchange (Current finds it by the related task), listed for the host
// (Pending) and answered by its update (Answer). The server's connection
// is this process's, so the table of held exchanges, by server and task,
// is this process's too: another replica holds none of them.

// heldKey names a held exchange: the server and its id of the task.
type heldKey struct{ server, task string }

// Held is the trunk's own tasks/result of one task, held as an exchange.
type Held struct {
	p  *Parking
	ex *exchange
}

// Hold returns the held exchange of the task the server (pc.Upstream)
// knows as task, opening it (pc's call, tasks/result, sent in the
// background) when there is none. The call is bounded as any upstream
// call (the server's timeouts.call) and by the trunk's life; when it
// returns the exchange is forgotten, and a later Hold opens another.
func (p *Parking) Hold(ctx context.Context, pc Parked, task string) *Held {
	p.holding.Lock()
	defer p.holding.Unlock()
	if h := p.Held(pc.Upstream.Name(), task); h != nil {
		return h
	}
	return &Held{p: p, ex: p.start(ctx, pc, task, pc.Params, task)}
}

// Held is the open held exchange of server's task, nil when there is none.
func (p *Parking) Held(server, task string) *Held {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ex := p.held[heldKey{server, task}]; ex != nil {
		return &Held{p: p, ex: ex}
	}
	return nil
}

// Pending is the server's requests the host has not answered yet, by key:
// a key stays the same until the request is answered and is never given
// to another in the exchange. When there is none it waits for one up to
// wait (or until ctx ends or the call returns).
func (h *Held) Pending(ctx context.Context, wait time.Duration) map[string]InputRequest {
	if out := h.pending(); len(out) > 0 || wait <= 0 {
		return out
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-h.ex.wake:
	case <-h.ex.done:
	case <-timer.C:
	case <-ctx.Done():
	}
	return h.pending()
}

// pending gives the requests arrived since the last look their keys and
// returns every one not answered.
func (h *Held) pending() map[string]InputRequest {
	ex := h.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.ended {
		return nil
	}
	if ex.given == nil {
		ex.given = map[string]*parkedAsk{}
	}
	for _, a := range ex.asks {
		ex.keys++
		ex.given["input-"+strconv.Itoa(ex.keys)] = a
	}
	ex.asks = nil
	out := make(map[string]InputRequest, len(ex.given))
	for key, a := range ex.given {
		out[key] = InputRequest{Method: a.method, Params: a.params}
	}
	return out
}

// Answer gives the server the host's responses, by the keys Pending gave.
// A key that is not pending (answered already, never given) answers
// nothing: the error names it.
func (h *Held) Answer(responses map[string]json.RawMessage) error {
	ex := h.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.ended {
		return fmt.Errorf("its tasks/result has ended")
	}
	for _, key := range slices.Sorted(maps.Keys(responses)) {
		if ex.given[key] == nil {
			return fmt.Errorf("input request %q is not one mcptrunk holds of it", key)
		}
	}
	for key, res := range responses {
		ex.given[key].reply <- askReply{res: res}
		delete(ex.given, key)
	}
	return nil
}

// End ends the exchange: its call is cancelled, and the requests still
// parked are answered with why.
func (h *Held) End(why error) { h.p.end(h.ex, why) }

// Done is closed when the call returned; then Result is its answer.
func (h *Held) Done() <-chan struct{} { return h.ex.done }

// Result is the call's answer, once Done is closed.
func (h *Held) Result() (json.RawMessage, error) {
	<-h.ex.done
	return h.ex.res, h.ex.err
}

// relatedTask is the task id a request's related-task _meta names ("" for
// none).
func relatedTask(params json.RawMessage) string {
	id, _ := rawjson.StringField(rawjson.MetaValue(params, RelatedTaskKey), "taskId")
	return id
}
