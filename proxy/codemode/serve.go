package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// Serve is the runner's side of the protocol of proxy/codemode/child,
// reading r and writing w: each "run" request runs its program with Run,
// each of the program's tool calls is a "call" request back to the
// trunk, whose error message the program sees. It returns when r ends,
// once every run has ended (a run still going is cancelled).
func Serve(r io.Reader, w io.Writer) error {
	h := &server{}
	h.conn = jsonrpc.NewConn(jsonrpc.NewLineReader(r), jsonrpc.NewLineWriter(w), h, nil)
	return h.conn.Serve()
}

// server answers the trunk's "run" requests.
type server struct{ conn *jsonrpc.Conn }

func (s *server) HandleRequest(ctx context.Context, req jsonrpc.Request) (json.RawMessage, error) {
	method, params := req.Method, req.Params
	if method != child.MethodRun {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "the code runner answers %q only, not %q", child.MethodRun, method)
	}
	var p child.RunParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "run: %v", err)
	}
	if limit := p.Budgets.MaxMemoryBytes; limit > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		stop := make(chan struct{})
		defer close(stop)
		defer cancel(nil)
		watchHeap(stop, uint64(limit), func() { cancel(&BudgetError{Budget: "maxMemoryBytes", Limit: fmt.Sprint(limit)}) })
	}
	res, err := Run(ctx, p.Code, Options{Call: s.call, Tools: p.Tools, Budgets: p.Budgets})
	return json.Marshal(child.Answer(res, err))
}

// watchHeap calls over, once, when a collection ends with more than limit
// bytes of live heap, until stop is closed: the graceful end of a program
// that allocates past its memory budget little by little, in a process
// that runs one program at a time. (One allocation past the process's
// limit ends the process instead: see cmd/mcptrunk-code.)
func watchHeap(stop <-chan struct{}, limit uint64, over func()) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// A finalizer runs after the collection that found its object
		// unreachable: one per collection, each arming the next.
		runtime.SetFinalizer(new(sentinel), func(*sentinel) {
			select {
			case <-stop:
				return
			default:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > limit {
				over()
				return
			}
			arm()
		})
	}
	arm()
}

// sentinel is an object whose finalizer watchHeap uses. It holds a
// pointer so that it is allocated on its own: the finalizer of a
// zero-sized object, or of a small one without pointers (which the
// runtime packs with others into one block), may never run.
type sentinel struct{ _ *sentinel }

func (*server) HandleNotification(string, json.RawMessage) {}

// call is a program's tool call, made by the trunk.
func (s *server) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params, err := json.Marshal(child.CallParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	res, err := s.conn.Call(ctx, child.MethodCall, params)
	if e, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return nil, errors.New(e.Message) // the trunk's refusal, as the caller would read it
	}
	return res, err
}

// Local runs code through Serve in this process, over in-memory pipes:
// the protocol of a runner process, without the process (and without its
// memory bound).
func Local(ctx context.Context, code string, o Options) (Result, error) {
	runnerIn, trunkOut := io.Pipe()
	trunkIn, runnerOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := Serve(runnerIn, runnerOut)
		runnerOut.Close()
		served <- err
	}()
	res, err := child.RunOver(ctx, trunkIn, trunkOut, code, o)
	<-served
	return res, err
}
