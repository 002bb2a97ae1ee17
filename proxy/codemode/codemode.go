// Package codemode runs a short JavaScript program whose only reach outside
// itself is a function that calls tools: code mode, where a model writes one
// program instead of making many calls, and only what the program returns
// goes back to it.
//
// The program is the body of an async function, run by goja (a pure-Go
// ECMAScript engine) with nothing of the process exposed: no require, no
// files, no network, no timers. It gets call(name, args), which returns a
// Promise of the tool's result as MCP gives it; tools.<group>.<name>(args),
// the same by typed name; and console.log, collected. Calls run
// concurrently (Promise.all) up to a cap; every budget (Budgets) ends the
// run with a *BudgetError naming it. The package knows nothing of the
// trunk: the caller passes the call function as a value. Budgets'
// MaxMemoryBytes is not enforced here but by the process the engine runs
// in (cmd/mcptrunk-code, which Serve runs).
//
//	res, err := codemode.Run(ctx, `const r = await call("mcp__notes__search", {query: "x"}); return r.structuredContent`,
//		codemode.Options{Call: callTool, Budgets: budgets})
package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"

	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// The types of a run are proxy/codemode/child's, which the trunk uses
// without linking the engine: see there.
type (
	Call        = child.Call
	Budgets     = child.Budgets
	Options     = child.Options
	Result      = child.Result
	BudgetError = child.BudgetError
)

// wrapStart and wrapEnd make the program the body of an async function
// called at once, so that it may await and return; the code's first line
// is the compiled source's first, so the lines errors name are the code's.
const (
	wrapStart = "(async function () {"
	wrapEnd   = "\n})()"
)

// Run runs code under o's budgets. The Result carries the logs written
// and the calls made even when the run fails; the error is a *BudgetError
// for a budget, ctx's cause when ctx ended, or the program's own
// (a syntax error, an uncaught exception) with its message. Every call
// the run started has ended when Run returns.
func Run(ctx context.Context, code string, o Options) (Result, error) {
	prog, err := goja.Compile("program", wrapStart+code+wrapEnd, false)
	if err != nil {
		return Result{}, fmt.Errorf("compiling the program: %w", err)
	}
	b := o.Budgets
	ctx, cancel := context.WithTimeoutCause(ctx, b.WallTime, &BudgetError{Budget: "wallTime", Limit: b.WallTime.String()})
	defer cancel()
	r := &run{vm: goja.New(), o: o, ctx: ctx, done: make(chan completion), sem: make(chan struct{}, b.MaxInFlight)}
	// Calls still in flight end with the run, and are waited for.
	defer r.wg.Wait()
	defer cancel()
	stop := context.AfterFunc(ctx, func() { r.vm.Interrupt(context.Cause(ctx)) })
	defer stop()
	if err := r.install(); err != nil {
		return Result{}, err
	}
	v, err := r.vm.RunProgram(prog)
	if err == nil {
		v, err = r.settle(v)
	}
	res := Result{Logs: r.logs, Calls: r.calls}
	if err != nil {
		return res, r.cause(err)
	}
	if res.Value, err = r.toJSON(v); err != nil {
		return res, r.cause(err)
	}
	if len(res.Value) > b.MaxResultBytes {
		return res, &BudgetError{Budget: "maxResultBytes", Limit: fmt.Sprint(b.MaxResultBytes)}
	}
	return res, nil
}

// maxStack bounds the program's call stack, in frames: deep enough for
// any program of a few calls, shallow enough that runaway recursion ends
// at once.
const maxStack = 2000

// run is one program's state. Everything but wg, the semaphore and the
// channel is touched only on the goroutine running the VM.
type run struct {
	vm    *goja.Runtime
	o     Options
	ctx   context.Context
	done  chan completion
	sem   chan struct{}
	wg    sync.WaitGroup
	fatal error // a budget the program went over: ends the run
	calls int
	// pending counts calls started and not yet settled in the VM.
	pending   int
	logs      []string
	logBytes  int
	parse     goja.Callable
	stringify goja.Callable
	errCtor   goja.Value
}

// completion is a finished call, to settle on the VM's goroutine.
type completion struct {
	resolve, reject func(any) error
	result          json.RawMessage
	err             error
}

// install defines what the program may use beyond ECMAScript itself.
func (r *run) install() error {
	vm := r.vm
	vm.SetMaxCallStackSize(maxStack)
	jsonObj := vm.Get("JSON").ToObject(vm)
	var ok, ok2 bool
	r.parse, ok = goja.AssertFunction(jsonObj.Get("parse"))
	r.stringify, ok2 = goja.AssertFunction(jsonObj.Get("stringify"))
	if !ok || !ok2 {
		return errors.New("the engine has no JSON")
	}
	r.errCtor = vm.Get("Error")
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		if err := console.Set(level, r.log); err != nil {
			return err
		}
	}
	tools := vm.NewObject()
	for group, fns := range r.o.Tools {
		g := vm.NewObject()
		for fn, name := range fns {
			if err := g.Set(fn, func(c goja.FunctionCall) goja.Value { return r.call(name, c.Argument(0)) }); err != nil {
				return err
			}
		}
		if err := tools.Set(group, g); err != nil {
			return err
		}
	}
	for name, v := range map[string]any{
		"console": console,
		"tools":   tools,
		"call": func(c goja.FunctionCall) goja.Value {
			name, ok := c.Argument(0).Export().(string)
			if !ok || name == "" {
				panic(vm.NewTypeError("call(name, args): name must be a tool's name, a string"))
			}
			return r.call(name, c.Argument(1))
		},
	} {
		if err := vm.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

// log is console.log: its arguments, strings as they are and other
// values as JSON, joined by spaces, one line.
func (r *run) log(c goja.FunctionCall) goja.Value {
	parts := make([]string, len(c.Arguments))
	for i, a := range c.Arguments {
		if s, ok := a.Export().(string); ok {
			parts[i] = s
			continue
		}
		j, err := r.toJSON(a)
		if err != nil {
			j = []byte(a.String())
		}
		parts[i] = string(j)
	}
	line := strings.Join(parts, " ")
	r.logBytes += len(line) + 1
	if r.logBytes > r.o.Budgets.MaxLogBytes {
		r.stop(&BudgetError{Budget: "maxLogBytes", Limit: fmt.Sprint(r.o.Budgets.MaxLogBytes)})
		return goja.Undefined()
	}
	r.logs = append(r.logs, line)
	return goja.Undefined()
}

// stop ends the run at a budget: the VM is interrupted at its next
// instruction, and the loop waiting for calls stops.
func (r *run) stop(err error) {
	if r.fatal == nil {
		r.fatal = err
	}
	r.vm.Interrupt(err)
}

// call starts one tool call and returns its Promise.
func (r *run) call(name string, args goja.Value) goja.Value {
	p, resolve, reject := r.vm.NewPromise()
	var raw json.RawMessage
	if !goja.IsUndefined(args) && !goja.IsNull(args) {
		j, err := r.toJSON(args)
		if err != nil || len(j) == 0 || j[0] != '{' {
			panic(r.vm.NewTypeError(fmt.Sprintf("call(%q, args): args must be an object", name)))
		}
		raw = j
	}
	if r.calls >= r.o.Budgets.MaxCalls {
		r.stop(&BudgetError{Budget: "maxCalls", Limit: fmt.Sprint(r.o.Budgets.MaxCalls)})
		return r.vm.ToValue(p)
	}
	r.calls++
	r.pending++
	r.wg.Go(func() {
		c := completion{resolve: resolve, reject: reject}
		select {
		case r.sem <- struct{}{}:
			c.result, c.err = r.o.Call(r.ctx, name, raw)
			<-r.sem
		case <-r.ctx.Done():
			c.err = context.Cause(r.ctx)
		}
		select {
		case r.done <- c:
		case <-r.ctx.Done():
		}
	})
	return r.vm.ToValue(p)
}

// settle runs the loop: while the program's promise is pending, each
// finished call is settled in the VM, which runs what awaited it.
func (r *run) settle(v goja.Value) (goja.Value, error) {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return nil, errors.New("the program did not run as an async function")
	}
	for p.State() == goja.PromiseStatePending {
		if r.fatal != nil {
			return nil, r.fatal
		}
		if r.pending == 0 {
			return nil, errors.New("the program awaits something that never settles (a Promise no tool call resolves)")
		}
		select {
		case c := <-r.done:
			r.pending--
			if err := r.complete(c); err != nil {
				return nil, err
			}
		case <-r.ctx.Done():
			return nil, context.Cause(r.ctx)
		}
	}
	if r.fatal != nil {
		return nil, r.fatal
	}
	if p.State() == goja.PromiseStateRejected {
		return nil, thrown(p.Result())
	}
	return p.Result(), nil
}

// complete settles one call's Promise.
func (r *run) complete(c completion) error {
	if c.err != nil {
		e, err := r.vm.New(r.errCtor, r.vm.ToValue(c.err.Error()))
		if err != nil {
			return err
		}
		return c.reject(e)
	}
	v, err := r.parse(goja.Undefined(), r.vm.ToValue(string(c.result)))
	if err != nil {
		return c.reject(r.vm.ToValue(fmt.Sprintf("the tool's result is not JSON: %v", err)))
	}
	return c.resolve(v)
}

// toJSON is JSON.stringify(v); what has no JSON (undefined, a function)
// is null.
func (r *run) toJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	s, err := r.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(s) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(s.String()), nil
}

// cause is the error a run ends with: the budget or ctx's end that
// interrupted the VM rather than the interruption itself.
func (r *run) cause(err error) error {
	if r.fatal != nil {
		return r.fatal
	}
	if _, ok := errors.AsType[*goja.StackOverflowError](err); ok {
		return fmt.Errorf("the program's call stack went over %d frames (a recursion without end?)", maxStack)
	}
	if ie, ok := errors.AsType[*goja.InterruptedError](err); ok {
		if e, ok := ie.Value().(error); ok {
			return e
		}
	}
	if ex, ok := errors.AsType[*goja.Exception](err); ok {
		return thrown(ex.Value())
	}
	return err
}

// thrown is the error of a value the program threw (or rejected with).
func thrown(v goja.Value) error {
	if o, ok := v.(*goja.Object); ok {
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) {
			name := "Error"
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
				name = n.String()
			}
			return fmt.Errorf("the program threw %s: %s", name, msg.String())
		}
	}
	return fmt.Errorf("the program threw %s", v.String())
}
