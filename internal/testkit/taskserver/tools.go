package taskserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

// asker is how a tool asks the client for input: a task parks on
// input_required until tasks/update answers (task.ask); a call run at once
// uses the multi round-trip flow, answered by the inputResponses of the
// call's retry (mrtr.ask).
type asker interface {
	ask(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error)
}

// tool is one fixture.
type tool struct {
	name, description string
	schema            string // inputSchema
	// taskSupport is execution.taskSupport: "forbidden" (always run at
	// once), "optional" (a task when the request declares the extension)
	// or "required" (-32021 when it does not).
	taskSupport string
	// gather, when set, are input requests answered by the multi
	// round-trip flow before the call is run or becomes a task (SEP-2663:
	// a server resolves those synchronously before creating the task).
	gather map[string]json.RawMessage
	run    func(ctx context.Context, args json.RawMessage, gathered map[string]json.RawMessage, in asker) (json.RawMessage, error)
}

func (t *tool) definition() map[string]any {
	return map[string]any{
		"name":        t.name,
		"description": t.description,
		"inputSchema": json.RawMessage(t.schema),
		"execution":   map[string]any{"taskSupport": t.taskSupport},
	}
}

// call answers tools/call: with a CreateTaskResult when the tool takes
// tasks and the request declares the extension, else by running it at
// once (-32021 for a tool that requires a task).
func (s *Server) call(ctx context.Context, req *request) (any, *rpcError) {
	var p struct {
		Name           string                     `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage            `json:"requestState"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, invalidParams("tools/call: %v", err)
	}
	t := s.tools[p.Name]
	if t == nil {
		return nil, invalidParams("Unknown tool: %q", p.Name)
	}
	if t.taskSupport == "required" && !req.extension {
		return nil, missingExtension("the tool " + t.name)
	}
	in := &mrtr{responses: p.InputResponses}
	gathered, err := in.ask(ctx, t.gather)
	if err != nil {
		return in.result(err)
	}
	if t.taskSupport != "forbidden" && req.extension {
		task, rerr := s.start(func(ctx context.Context, in asker) (json.RawMessage, error) {
			return t.run(ctx, p.Arguments, gathered, in)
		})
		if rerr != nil {
			return nil, rerr
		}
		return task.createResult(), nil
	}
	result, err := t.run(ctx, p.Arguments, gathered, in)
	if err != nil {
		return in.result(err)
	}
	return complete(result), nil
}

// mrtr asks within one tools/call: the answers are the retry's
// inputResponses, and a question they do not answer ends the call with an
// InputRequiredResult naming what is still needed.
type mrtr struct {
	responses map[string]json.RawMessage
}

// needInput ends a call that asked for input its request did not bring.
type needInput struct{ reqs map[string]json.RawMessage }

func (needInput) Error() string { return "input required" }

func (m *mrtr) ask(_ context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	out, missing := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for k, r := range reqs {
		if a, ok := m.responses[k]; ok {
			out[k] = a
		} else {
			missing[k] = r
		}
	}
	if len(missing) > 0 {
		return nil, needInput{missing}
	}
	return out, nil
}

// result is the answer to a call that ended with err.
func (m *mrtr) result(err error) (any, *rpcError) {
	var need needInput
	var rerr *rpcError
	switch {
	case errors.As(err, &need):
		return map[string]any{protocol.FieldResultType: protocol.ResultTypeInputRequired, protocol.FieldInputRequests: need.reqs}, nil
	case errors.As(err, &rerr):
		return nil, rerr
	}
	return nil, &rpcError{Code: -32603, Message: err.Error()}
}

// complete marks a tool's result as the final one.
func complete(result json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return result
	}
	m[protocol.FieldResultType] = json.RawMessage(`"complete"`)
	b, _ := json.Marshal(m)
	return b
}

// text is a tool result of one text block.
func text(isError bool, format string, args ...any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]any{{"type": "text", "text": fmt.Sprintf(format, args...)}},
		"isError": isError,
	})
	return b
}

// sleep waits d on a timer unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// elicit is an elicitation/create input request for a form of props.
func elicit(message, props string) json.RawMessage {
	return json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":` + quote(message) +
		`,"requestedSchema":{"type":"object","properties":` + props + `}}}`)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// elicited is what an elicitation's answer carried: its action and
// content.
type elicited struct {
	Action  string `json:"action"`
	Content struct {
		Name    string `json:"name"`
		Confirm bool   `json:"confirm"`
	} `json:"content"`
}

func readElicited(raw json.RawMessage) elicited {
	var e elicited
	_ = json.Unmarshal(raw, &e)
	return e
}

// fixtures are the tools the conformance suite's tasks scenarios require.
func fixtures() []*tool {
	noArgs := `{"type":"object","properties":{}}`
	return []*tool{{
		name: "greet", description: "Says hello to name, at once (never a task).", taskSupport: "forbidden",
		schema: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
		run: func(_ context.Context, args json.RawMessage, _ map[string]json.RawMessage, _ asker) (json.RawMessage, error) {
			var a struct{ Name string }
			_ = json.Unmarshal(args, &a)
			return text(false, "Hello, %s!", a.Name), nil
		},
	}, {
		name: "slow_compute", description: "Works for seconds seconds, then answers with label; stops when cancelled.", taskSupport: "optional",
		schema: `{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`,
		run: func(ctx context.Context, args json.RawMessage, _ map[string]json.RawMessage, _ asker) (json.RawMessage, error) {
			var a struct {
				Seconds float64
				Label   string
			}
			_ = json.Unmarshal(args, &a)
			if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return text(false, "computed %q in %gs", a.Label, a.Seconds), nil
		},
	}, {
		name: "failing_job", description: "Fails as a tool (isError) after a second; requires a task.", taskSupport: "required", schema: noArgs,
		run: func(ctx context.Context, _ json.RawMessage, _ map[string]json.RawMessage, _ asker) (json.RawMessage, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return nil, err
			}
			return text(true, "the job failed"), nil
		},
	}, {
		name: "protocol_error_job", description: "Crashes: its task fails with a JSON-RPC error.", taskSupport: "optional", schema: noArgs,
		run: func(context.Context, json.RawMessage, map[string]json.RawMessage, asker) (json.RawMessage, error) {
			panic("protocol_error_job crashed on purpose")
		},
	}, {
		name: "confirm_delete", description: "Asks to confirm deleting filename, then says what it did.", taskSupport: "optional",
		schema: `{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`,
		run: func(ctx context.Context, args json.RawMessage, _ map[string]json.RawMessage, in asker) (json.RawMessage, error) {
			var a struct{ Filename string }
			_ = json.Unmarshal(args, &a)
			got, err := in.ask(ctx, map[string]json.RawMessage{"confirm": elicit("Delete "+a.Filename+"?", `{"confirm":{"type":"boolean"}}`)})
			if err != nil {
				return nil, err
			}
			if e := readElicited(got["confirm"]); e.Action == "accept" && e.Content.Confirm {
				return text(false, "deleted %s", a.Filename), nil
			}
			return text(false, "kept %s", a.Filename), nil
		},
	}, {
		name: "multi_input", description: "Asks two questions at once, then answers with both answers.", taskSupport: "optional", schema: noArgs,
		run: func(ctx context.Context, _ json.RawMessage, _ map[string]json.RawMessage, in asker) (json.RawMessage, error) {
			got, err := in.ask(ctx, map[string]json.RawMessage{
				"first":  elicit("First answer?", `{"name":{"type":"string"},"confirm":{"type":"boolean"}}`),
				"second": elicit("Second answer?", `{"name":{"type":"string"},"confirm":{"type":"boolean"}}`),
			})
			if err != nil {
				return nil, err
			}
			return text(false, "answers: %s, %s", readElicited(got["first"]).Content.Name, readElicited(got["second"]).Content.Name), nil
		},
	}, {
		name: "test_tool_with_task", description: "Asks the user's name by a multi round-trip, then greets them from a task.", taskSupport: "required", schema: noArgs,
		gather: map[string]json.RawMessage{"user_name": elicit("What is your name?", `{"name":{"type":"string"}}`)},
		run: func(ctx context.Context, _ json.RawMessage, gathered map[string]json.RawMessage, _ asker) (json.RawMessage, error) {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
			return text(false, "Hello, %s!", readElicited(gathered["user_name"]).Content.Name), nil
		},
	}}
}
