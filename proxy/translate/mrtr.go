package translate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Multi-round-trip requests. At the stateless revision a server that needs
// the client's input during tools/call, prompts/get or resources/read
// answers with resultType "input_required", a map of inputRequests
// (elicitation, sampling, roots) and an opaque requestState, and the client
// retries the request with inputResponses and that state. Before it, the
// server sent those requests to the client itself, in the middle of the
// call. The trunk translates wherever host and upstream speak differently,
// so the host never learns which revision an upstream speaks:
//
//	host 2025, upstream 2026: Fulfil (this file) asks the host each input
//	  request as a real request and retries the upstream until it completes;
//	host 2026, upstream 2025: park (proxy/translate/mrtr_park.go) keeps the upstream's call
//	  and its requests waiting, answers the host input_required with a state
//	  of the trunk's own, and answers the requests when the host retries;
//	same revision on both sides: passed through.

// Upstream is the server a request is translated for (an upstream.Caller:
// its calls are told the host request's facts).
type Upstream interface {
	Name() string
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// AskHost sends one of a server's requests to the host whose request is
// being translated, and returns the host's answer.
type AskHost func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// Rounds the trunk goes through for one host request before giving up, as
// a client would: a server that asks forever must not hold a call forever.
const (
	maxInputRounds = 10
	maxEmptyRounds = 3 // input_required with no requests: the server sheds load
)

// InputRequest is one entry of the inputRequests of an input_required result
// or of a 2026-07-28 task waiting for input.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// inputRequired is what the trunk reads of a result that needs input.
type inputRequired struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests"`
	RequestState  *string                 `json:"requestState"`
}

// needsInput reports whether res is an input_required result, and decodes
// it. A cheap byte test first: most results are not.
func needsInput(res json.RawMessage) (inputRequired, bool) {
	var ir inputRequired
	if !rawjson.HasField(res, protocol.FieldResultType) {
		return ir, false
	}
	if rt, _ := rawjson.StringField(res, protocol.FieldResultType); rt != protocol.ResultTypeInputRequired {
		return ir, false
	}
	if json.Unmarshal(res, &ir) != nil {
		return ir, false
	}
	return ir, true
}

// capabilityFor is the client capability an input request needs.
var capabilityFor = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// Fulfil serves a 2025 host's request to a stateless upstream: each
// input_required result becomes real requests to the host (only those its
// capabilities allow, concurrently, as a server of that revision would
// send them), and the upstream is asked again with the answers and its own
// requestState, until a result that is complete, the only one the host sees.
func Fulfil(ctx context.Context, c Upstream, hr HostRequest, ask AskHost, method string, params json.RawMessage) (json.RawMessage, error) {
	empty := 0
	for round := 0; ; round++ {
		res, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, err
		}
		ir, ok := needsInput(res)
		if !ok {
			return res, nil
		}
		if round+1 >= maxInputRounds {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s on server %q: still asking for input after %d rounds", method, c.Name(), maxInputRounds)
		}
		if len(ir.InputRequests) == 0 {
			if empty++; empty >= maxEmptyRounds {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s on server %q: the server is busy (input_required with no requests %d times)", method, c.Name(), empty)
			}
		}
		if r := CheckInputs(ir.InputRequests, hr.Can); r != nil {
			if r.Capability == "" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s on server %q: input request %q has unknown method %q", method, c.Name(), r.Key, r.Method)
			}
			return nil, jsonrpc.Errorf(protocol.CodeMissingClientCapabilities, "%s on server %q needs the host's %s capability (input request %q), which the host did not declare", method, c.Name(), r.Capability, r.Key)
		}
		answers, err := AskAll(ctx, ask, ir.InputRequests)
		if err != nil {
			return nil, err
		}
		if params, err = retryParams(params, answers, ir.RequestState); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s on server %q: %v", method, c.Name(), err)
		}
	}
}

// InputRefused is why the host cannot answer one of a server's input
// requests: its method is none the trunk knows (Capability ""), or it needs
// a client capability the host did not declare.
type InputRefused struct {
	Key, Method, Capability string
}

// CheckInputs returns the first of requests (in key order) the host cannot
// answer, can being the host's declared capabilities; nil when it can
// answer them all. Nothing is asked before all are known to be answerable.
func CheckInputs(requests map[string]InputRequest, can func(capability string) bool) *InputRefused {
	for _, key := range slices.Sorted(maps.Keys(requests)) {
		req := requests[key]
		need, known := capabilityFor[req.Method]
		if !known {
			return &InputRefused{Key: key, Method: req.Method}
		}
		if !can(need) {
			return &InputRefused{Key: key, Method: req.Method, Capability: need}
		}
	}
	return nil
}

// AskAll sends every input request to the host at once and collects the
// answers by key; the first failure fails them all, as it would directly.
func AskAll(ctx context.Context, ask AskHost, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		answers = make(map[string]json.RawMessage, len(reqs))
		first   error
		wg      sync.WaitGroup
	)
	for key, req := range reqs {
		wg.Go(func() {
			res, err := ask(ctx, req.Method, req.Params)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
					cancel()
				}
				return
			}
			answers[key] = res
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return answers, nil
}

// retryParams returns the params of a retry: the original ones with the
// answers as inputResponses and the server's requestState (none when it
// gave none).
func retryParams(params json.RawMessage, answers map[string]json.RawMessage, state *string) (json.RawMessage, error) {
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	encoded, err := json.Marshal(answers)
	if err != nil {
		return nil, fmt.Errorf("encoding inputResponses: %w", err)
	}
	out, err := rawjson.ReplaceField(params, protocol.FieldInputResponses, encoded)
	if err != nil {
		return nil, err
	}
	if state == nil {
		return rawjson.DeleteFields(out, protocol.FieldRequestState)
	}
	s, _ := json.Marshal(*state)
	return rawjson.ReplaceField(out, protocol.FieldRequestState, s)
}
