package tasks

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// A 2026-07-28 host's task on a 2025-11-25 server that asks for input.
// Such a server sends its requests (elicitation/create,
// sampling/createMessage) only while its client waits on tasks/result,
// which a 2026-07-28 host never sends: it polls tasks/get and answers the
// task's inputRequests with tasks/update. So the first tasks/get that finds
// the task at input_required has the trunk send tasks/result itself, held
// as an exchange of translate.Parking (Parking.Hold; one per task in this
// process); the requests the server sends during it are the task's
// inputRequests in each tasks/get, tasks/update answers them, tasks/cancel
// ends the exchange, and the task's result, once it completed, is that
// tasks/result's answer.

// holdFor is the held exchange of the server's task id, opened if need be.
func (a *Route) holdFor(ctx context.Context, id string) *translate.Held {
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	return a.Parking.Hold(ctx, translate.Parked{Upstream: named{a.Conn, a.Server}, Timeout: a.Timeout, Host: a.Host,
		Method: "tasks/result", Params: byID}, id)
}

// held is the open held exchange of the server's task id (nil: none).
func (a *Route) held(id string) *translate.Held {
	if a.Parking == nil {
		return nil
	}
	return a.Parking.Held(a.Server, id)
}

// withInputs adds to out, tasks/get's answer for the host about the
// server's task id at input_required, the requests the server sent during
// the trunk's tasks/result of it not answered yet. When there are none yet
// it waits for them up to the task's poll interval: the host would have
// waited that long to ask again.
func (a *Route) withInputs(ctx context.Context, id string, out json.RawMessage) (json.RawMessage, error) {
	if a.Parking == nil {
		return out, nil
	}
	pending := a.holdFor(ctx, id).Pending(ctx, interval(out))
	if len(pending) == 0 {
		return out, nil
	}
	b, err := json.Marshal(pending)
	if err != nil {
		return nil, err
	}
	return rawjson.ReplaceField(out, protocol.FieldInputRequests, b)
}

// result is the server's answer to tasks/result of its task id, which
// has ended: the held exchange's, when the trunk has one open that did not
// fail, else asked now.
func (a *Route) result(ctx context.Context, id string) (json.RawMessage, error) {
	if h := a.held(id); h != nil {
		select {
		case <-h.Done():
			if res, err := h.Result(); err == nil {
				return res, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	byID, _ := json.Marshal(map[string]string{"taskId": id})
	return a.Conn.Call(ctx, "tasks/result", byID)
}

// update answers the host's tasks/update (params: forward) of the server's
// task id: its inputResponses go to the server's pending requests, by the
// keys tasks/get gave. Responses the trunk does not hold a request for (an
// unknown key, a task another mcptrunk process followed, or none asked)
// answer nothing and are refused naming the task.
func (a *Route) update(id string, forward json.RawMessage) (json.RawMessage, error) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(forward, &p) != nil || p.InputResponses == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tasks/update: params.inputResponses must be an object of results by key")
	}
	h := a.held(id)
	if h == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tasks/update: task %q (server %q, at 2025-11-25): this mcptrunk process holds no input request of it; it lists a task's input requests in tasks/get, and only the process that did can answer them", a.Issue(id), a.Server)
	}
	if err := h.Answer(p.InputResponses); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tasks/update: task %q (server %q): %v", a.Issue(id), a.Server, err)
	}
	return json.RawMessage(`{"resultType":"complete"}`), nil
}

// endHeld ends the held exchange of the server's task id, if any: the
// host cancelled the task.
func (a *Route) endHeld(id string) {
	if h := a.held(id); h != nil {
		h.End(errors.New("the host cancelled the task"))
	}
}

// named is a server's connection as an exchange's upstream.
type named struct {
	Caller
	server string
}

func (n named) Name() string { return n.server }
