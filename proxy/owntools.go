package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// ownTools is the trunk as its own tools see it (trunktools.Trunk).
type ownTools struct{ t *Trunk }

func (o ownTools) WaitSettled(ctx context.Context)             { o.t.WaitSettled(ctx) }
func (o ownTools) Servers() []*upstream.Client                 { return o.t.clients() }
func (o ownTools) Server(name string) (*upstream.Client, bool) { return o.t.Fleet().Client(name) }
func (o ownTools) Catalog(ctx context.Context) *catalog.Catalog {
	return o.t.viewOf(ctx, o.t.snapshot())
}
func (o ownTools) Status() trunktools.StatusReport { return o.t.statusReport() }

func (o ownTools) ReadResource(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return o.t.routeResource(ctx, "resources/read", params, true)
}

func (o ownTools) CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return o.t.routeNamed(ctx, "tools/call", params, "tool")
}

func (o ownTools) CallInRun(ctx context.Context, run string, params json.RawMessage) (json.RawMessage, error) {
	ctx = inRun(ctx) // the program reads the whole result: none of it reaches the model but what the run returns
	handle := func(ctx context.Context) (json.RawMessage, error) { return o.t.Handle(ctx, "tools/call", params) }
	if s := hostRequestOf(ctx).session; s != nil {
		return s.observeInRun(ctx, run, params, handle)
	}
	return handle(ctx)
}

func (o ownTools) CodeMode() config.CodeMode { return o.t.cfg.Load().Trunk.CodeMode.WithDefaults() }

// statusReport is the report of the status tool and resource now.
func (t *Trunk) statusReport() trunktools.StatusReport {
	r := trunktools.StatusReport{Servers: []upstream.Status{}, MaxMessageBytes: t.cfg.Load().Trunk.MaxMessageBytes, DroppedNotifications: t.dropped.Load(), UnattributedNotifications: t.unowned.Load(), Pinning: t.pins.Load().Report(), ParkedCalls: t.parked.Count(),
		Conflicts: t.snapshot().Conflicts}
	r.KeptResultBytes, r.KeptResults = t.kept.Bytes()
	running := t.taskLog.Running()
	for _, c := range t.clients() {
		st := c.Status()
		st.Tasks = running[c.Name()]
		r.Servers = append(r.Servers, st)
	}
	return r
}
