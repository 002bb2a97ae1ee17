package trunktools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// Code mode (trunk.codeMode): the model writes one short program against
// the caller's tools, the trunk runs it in a runner process
// (proxy/codemode/child), and only what the program returns reaches the
// model. Every call the program makes is a call of the caller's: routed,
// admitted, pinned and audited as the host's own tools/call would be
// (Trunk.CallInRun).
var (
	runCodeTool = ownTool{"run_code", `"title":"Run a program of MCP tool calls",` +
		`"description":"Run a JavaScript program that calls the MCP tools behind mcptrunk, and get back only what it returns (with what it logged). The program is the body of an async function: use await call(fullToolName, args) or tools.<server>.<tool>(args), which give the tool's result as MCP does ({content, structuredContent, isError}); Promise.all runs calls concurrently; a refused call throws an Error you can catch; console.log is collected. Nothing else is available (no files, network, timers or modules), and a run is bounded in time, calls and output. code_api gives the tools as TypeScript declarations.",` +
		`"inputSchema":{"type":"object","properties":{"code":{"type":"string","description":"The program: the body of an async function; what it returns is the result."}},"required":["code"]}`}
	codeAPITool = ownTool{"code_api", `"title":"The MCP tools as a TypeScript API",` +
		`"description":"Describe the MCP tools run_code can call, as TypeScript declarations: one function per tool, grouped by server, with parameter and result types from the tools' schemas.",` +
		`"inputSchema":{"type":"object","properties":{}},` + readOnlyAnnotations}
)

// runCode runs one program with the budgets of trunk.codeMode.
func (t runner) runCode(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Code == "" {
		return catalog.ToolError("run_code: a program (code) is required")
	}
	t.WaitSettled(ctx)
	cm := t.CodeMode()
	cat := t.Catalog(ctx)
	_, fns := declarations(cat.Searchable)
	run := runID()
	call := func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		if raw, own := cat.Tools[naming.TrunkServer][name]; own && raw == runCodeTool.name {
			return nil, errors.New("run_code cannot be called from a program")
		}
		params, err := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments,omitempty"`
		}{name, args})
		if err != nil {
			return nil, err
		}
		res, err := t.CallInRun(ctx, run, params)
		if e, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return nil, errors.New(e.Message) // the message the caller would have got
		}
		return res, err
	}
	runProgram := child.Run
	if r, ok := t.Trunk.(ProgramRunner); ok {
		runProgram = r.RunProgram
	}
	res, err := runProgram(ctx, a.Code, child.Options{Call: call, Tools: fns, Budgets: child.Budgets{
		WallTime: cm.WallTime.D(), MaxCalls: cm.MaxCalls, MaxInFlight: cm.MaxInFlight, MaxResultBytes: cm.MaxResultBytes, MaxLogBytes: cm.MaxLogBytes,
		MaxMemoryBytes: cm.MaxMemoryBytes}})
	out := runReport{Run: run, Result: res.Value, Logs: res.Logs, Calls: res.Calls}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the host cancelled the run: it reads no result
		}
		out.Result, out.Error = nil, err.Error()
		body, _ := json.Marshal(out)
		return catalog.ToolError("%s", body)
	}
	return toolResult(out)
}

// ProgramRunner is a Trunk that says how code mode's programs run (the
// proxy's, per its Options.RunProgram; tests run them in process with
// codemode.Local); a Trunk that is not one runs each in a runner process
// (child.Run).
type ProgramRunner interface {
	RunProgram(ctx context.Context, code string, o child.Options) (child.Result, error)
}

// runReport is a run's result: what the program returned, or the error it
// ended with; what it logged; how many calls it made; and the run's id,
// which the audit log's lines of those calls carry.
type runReport struct {
	Run    string          `json:"run"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Logs   []string        `json:"logs,omitempty"`
	Calls  int             `json:"calls"`
}

// runID names one run: random, so that no two runs' calls share it.
func runID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// codeAPI answers code_api: the caller's tools as declarations.
func (t runner) codeAPI(ctx context.Context) (json.RawMessage, error) {
	t.WaitSettled(ctx)
	decl, _ := declarations(t.Catalog(ctx).Searchable)
	text, _ := json.Marshal(decl)
	return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%s}]}`, text)), nil
}
