package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// ownTools is the trunk as its own tools see it (trunktools.Trunk), for
// the request that called one, in its generation.
type ownTools struct {
	t  *Trunk
	rq request
}

func (o ownTools) WaitSettled(ctx context.Context)             { o.t.WaitSettled(ctx) }
func (o ownTools) Servers() []*upstream.Client                 { return o.t.clients() }
func (o ownTools) Server(name string) (*upstream.Client, bool) { return o.t.Fleet().Client(name) }
func (o ownTools) Catalog(ctx context.Context) *catalog.Catalog {
	return o.rq.view(o.rq.st.catalog())
}
func (o ownTools) Status() trunktools.StatusReport { return o.t.statusReport(o.rq.st) }

// ReadResource and CallTool are counted by trunk.limits as the request
// they stand for is: the trunk's own tools are no way around a limit.
func (o ownTools) ReadResource(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if res, refused, err := o.t.limited(ctx, o.rq, "resources/read", params); refused {
		return res, err
	}
	return o.t.routeResource(ctx, o.rq, "resources/read", params, true)
}

func (o ownTools) CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if res, refused, err := o.t.limited(ctx, o.rq, "tools/call", params); refused {
		return res, err
	}
	return o.t.routeNamed(ctx, o.rq, "tools/call", params, "tool")
}

func (o ownTools) CallInRun(ctx context.Context, run string, params json.RawMessage) (json.RawMessage, error) {
	hr := o.rq.hostRequest
	hr.inRun = true // the program reads the whole result: none of it reaches the model but what the run returns
	handle := func(ctx context.Context) (json.RawMessage, error) {
		return o.t.handle(ctx, hr, "tools/call", params)
	}
	if s := o.rq.session; s != nil {
		return s.observeInRun(ctx, run, params, handle)
	}
	return handle(ctx)
}

func (o ownTools) CodeMode() config.CodeMode { return o.rq.st.cfg.Trunk.CodeMode.WithDefaults() }

// RunProgram runs a code-mode program as Options.RunProgram says, once
// the trunk's runs at once (trunk.codeMode.maxRuns) leave it a place.
func (o ownTools) RunProgram(ctx context.Context, code string, opts child.Options) (child.Result, error) {
	return o.t.codeRuns.run(ctx, o.CodeMode().MaxRuns, code, opts, o.t.runProgram)
}

// statusReport is the report of the status tool and resource now, under
// generation st.
func (t *Trunk) statusReport(st *state) trunktools.StatusReport {
	r := trunktools.StatusReport{Servers: []upstream.Status{}, MaxMessageBytes: st.cfg.Trunk.MaxMessageBytes, DroppedNotifications: t.dropped.Load(), UnattributedNotifications: t.unowned.Load(), Pinning: st.pins.Report(), ParkedCalls: t.parked.Count(),
		Conflicts: st.catalog().Conflicts}
	r.KeptResultBytes, r.KeptResults = t.kept.Bytes()
	if t.store != nil && t.store.Info().Kind != "memory" {
		h := t.store.Status()
		r.StateStore = &trunktools.StateStoreStatus{Kind: t.store.Info().Kind, Up: h.Up, Since: h.Since}
	}
	running := t.taskLog.Running()
	for _, c := range t.clients() {
		st := c.Status()
		st.Tasks = running[c.Name()]
		r.Servers = append(r.Servers, st)
	}
	return r
}
