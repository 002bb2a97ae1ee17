// Package child runs code mode's programs in a child process, the runner
// (cmd/mcptrunk-code), so that the JavaScript engine is not linked into
// the trunk and a program's memory is bounded by the runner's process
// limits rather than the trunk's.
//
// The trunk and the runner speak JSON-RPC over the runner's stdin and
// stdout: the trunk sends one "run" request (the program, its tools and
// budgets); the runner makes a "call" request back for each tool call
// the program makes, which the trunk routes as its own; the run's answer
// carries the result, the logs, the calls made and the error it ended
// with. This package is the protocol's trunk side and the types both
// sides share; proxy/codemode is the engine and the runner's side.
package child

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// Call calls the tool name (the exported name, as the caller lists it)
// with args (a JSON object, or nil for none) and returns its result as MCP
// gives it. An error is a refused or failed call: the program sees it as a
// rejected Promise whose Error has err's message.
type Call func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

// Budgets bound one run. Each must be positive, but MaxMemoryBytes, which
// only a runner process enforces (0: the process's default).
type Budgets struct {
	WallTime       time.Duration `json:"wallTime"`       // from start to result; the program is interrupted at it
	MaxCalls       int           `json:"maxCalls"`       // calls in all
	MaxInFlight    int           `json:"maxInFlight"`    // calls at once; more wait their turn
	MaxResultBytes int           `json:"maxResultBytes"` // the result as JSON
	MaxLogBytes    int           `json:"maxLogBytes"`    // what console.log wrote, counted as collected
	// MaxMemoryBytes bounds the runner process's memory: a program that
	// allocates past it ends the process and the run.
	MaxMemoryBytes int64 `json:"maxMemoryBytes,omitempty"`
}

// Options are what a run needs.
type Options struct {
	Call    Call
	Budgets Budgets
	// Tools groups callable names for the typed functions:
	// tools[group][function] is the exported name that
	// tools.<group>.<function>(args) calls. May be nil.
	Tools map[string]map[string]string
}

// Result is what a run produced.
type Result struct {
	// Value is what the program returned, as JSON (null for nothing).
	Value json.RawMessage `json:"value,omitempty"`
	// Logs are the lines console.log wrote, in order.
	Logs []string `json:"logs,omitempty"`
	// Calls counts the tool calls the program made.
	Calls int `json:"calls"`
}

// BudgetError ends a run that went over one of its budgets.
type BudgetError struct {
	Budget string // the setting's name: wallTime, maxCalls, maxResultBytes, maxLogBytes, maxMemoryBytes
	Limit  string // the limit, as the setting reads
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the program went over its budget %s (%s)", e.Budget, e.Limit)
}

// The protocol's methods: MethodRun from the trunk to the runner,
// MethodCall from the runner back to the trunk.
const (
	MethodRun  = "run"
	MethodCall = "call"
)

// MaxMessageBytes bounds one message the trunk reads from a runner: a
// call's arguments, or the run's answer (which the budgets keep far
// smaller). A call over it fails in the program with an error saying so,
// and the trunk does not hold it: a program's memory stays the runner's.
const MaxMessageBytes = 16 << 20

// RunParams are a "run" request's params.
type RunParams struct {
	Code    string                       `json:"code"`
	Tools   map[string]map[string]string `json:"tools,omitempty"`
	Budgets Budgets                      `json:"budgets"`
}

// RunAnswer is a "run" request's result: the run's Result and, when it
// failed, its error (Budget and Limit set for a *BudgetError).
type RunAnswer struct {
	Result
	Error  string `json:"error,omitempty"`
	Budget string `json:"budget,omitempty"`
	Limit  string `json:"limit,omitempty"`
}

// Answer is the RunAnswer of a run that ended with res and err.
func Answer(res Result, err error) RunAnswer {
	a := RunAnswer{Result: res}
	if be, ok := errors.AsType[*BudgetError](err); ok {
		a.Budget, a.Limit = be.Budget, be.Limit
	}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

// Err is the error the run ended with: a *BudgetError for a budget, nil
// for none.
func (a RunAnswer) Err() error {
	switch {
	case a.Budget != "":
		return &BudgetError{a.Budget, a.Limit}
	case a.Error != "":
		return errors.New(a.Error)
	}
	return nil
}

// CallParams are a "call" request's params.
type CallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// RunOver runs code over a runner reached by reading r and writing w: it
// sends the run, serves the runner's calls with o.Call, and returns the
// run's answer. It closes w when the run has ended (the runner then ends
// its side) and returns once r has ended. When ctx ends, the run ends
// with ctx's cause. An error that is neither that, the program's nor a
// budget's is the connection's: the runner ended without an answer.
func RunOver(ctx context.Context, r io.Reader, w io.WriteCloser, code string, o Options) (Result, error) {
	conn := jsonrpc.NewConn(jsonrpc.NewLineReader(r), jsonrpc.NewLineWriter(w), calls{ctx, o.Call}, &jsonrpc.Options{
		AnswerInvalid: true, MaxReadBytes: MaxMessageBytes, ReadLimitSetting: "the most a code-mode program may send at once"})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = conn.Serve()
	}()
	params, err := json.Marshal(RunParams{Code: code, Tools: o.Tools, Budgets: o.Budgets})
	if err == nil {
		var raw json.RawMessage
		raw, err = conn.Call(ctx, MethodRun, params)
		if ctx.Err() != nil {
			// The run ended with ctx, whatever the runner answered as it
			// did (a program that caught its cancelled call, say).
			err = context.Cause(ctx)
		}
		if err == nil {
			var a RunAnswer
			if err = json.Unmarshal(raw, &a); err == nil {
				w.Close()
				<-served
				return a.Result, a.Err()
			}
			err = fmt.Errorf("the code runner's answer: %w", err)
		}
	}
	w.Close()
	<-served
	return Result{}, err
}

// calls serves the runner's "call" requests with call, in the run's
// context: a call is its caller's (the context's values say who that is),
// and ends when the runner cancels it or the run ends.
type calls struct {
	run  context.Context
	call Call
}

func (c calls) HandleRequest(hctx context.Context, req jsonrpc.Request) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	if method != MethodCall {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "the trunk answers %q only, not %q", MethodCall, method)
	}
	var p CallParams
	if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "call: a tool's name is required")
	}
	ctx, cancel := context.WithCancelCause(c.run)
	defer cancel(nil)
	stop := context.AfterFunc(hctx, func() { cancel(context.Cause(hctx)) })
	defer stop()
	res, err := c.call(ctx, p.Name, p.Arguments)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%s", err.Error())
	}
	return res, nil
}

func (calls) HandleNotification(string, json.RawMessage) {}
