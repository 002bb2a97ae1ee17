package tasks

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// A 2026-07-28 task that needs the client's input says so in tasks/get:
// status input_required and inputRequests (elicitation, sampling, roots by
// key), which the client answers with tasks/update. A task the trunk
// follows for a host is the host's call all the same, so its input
// requests go to the host as the trunk puts any server's requests during
// a call to it (translate.AskHost), and the answers back to the server.

// answer puts the input requests of task (server's id) not answered yet
// to the host and sends the answers with tasks/update. asked reports
// whether there were any; an error means the task cannot go on (the host
// cannot answer, refused, or the update failed).
func (f *Follower) answer(ctx context.Context, id string, task json.RawMessage, answered map[string]bool) (asked bool, _ error) {
	var t struct {
		InputRequests map[string]translate.InputRequest `json:"inputRequests"`
	}
	if err := json.Unmarshal(task, &t); err != nil {
		return false, jsonrpc.Errorf(jsonrpc.CodeInternalError, "server %q: task %s: reading its input requests: %v", f.Server, id, err)
	}
	for key := range t.InputRequests {
		if answered[key] {
			delete(t.InputRequests, key)
		}
	}
	if len(t.InputRequests) == 0 {
		return false, nil // answered already, or asked nothing yet: poll on
	}
	can := f.Can
	if f.Ask == nil || can == nil {
		can = func(string) bool { return false }
	}
	if r := translate.CheckInputs(t.InputRequests, can); r != nil {
		return false, f.refused(id, r)
	}
	if f.Related != "" {
		related, _ := json.Marshal(map[string]string{"taskId": f.Related})
		for key, req := range t.InputRequests {
			if p, err := rawjson.ReplaceReservedMeta(req.Params, map[string]json.RawMessage{translate.RelatedTaskKey: related}); err == nil {
				req.Params = p
				t.InputRequests[key] = req
			}
		}
	}
	answers, err := translate.AskAll(ctx, f.Ask, t.InputRequests)
	if err != nil {
		return false, err
	}
	update, err := json.Marshal(map[string]any{"taskId": id, protocol.FieldInputResponses: answers})
	if err != nil {
		return false, err
	}
	if _, err := f.Conn.Call(ctx, "tasks/update", update); err != nil {
		return false, err
	}
	for key := range answers {
		answered[key] = true
	}
	return true, nil
}

// refused is the error of a task the host cannot give the input it needs.
func (f *Follower) refused(id string, r *translate.InputRefused) error {
	what := fmt.Sprintf("tool %q on server %q", f.Tool, f.Server)
	switch {
	case r.Capability == "":
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: task %s asks for input by unknown method %q (input request %q); the task was cancelled", what, id, r.Method, r.Key)
	case f.Ask == nil:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s: task %s asks for input (%s, input request %q), which mcptrunk cannot get from this host; the task was cancelled", what, id, r.Method, r.Key)
	}
	return jsonrpc.Errorf(protocol.CodeMissingClientCapabilities, "%s: task %s needs the host's %s capability (input request %q), which the host did not declare; the task was cancelled", what, id, r.Capability, r.Key)
}
