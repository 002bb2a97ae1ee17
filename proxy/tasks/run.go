package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// Call is one host call of a tool that modeFor says is not Direct, with
// what the trunk lends it: Run picks the way.
type Call struct {
	How Mode
	// Follower is the server's connection and names, and how to put input
	// requests to the host over its session (Ask, Can).
	Follower
	Host    translate.HostRequest // the host's request: its revision
	Forward json.RawMessage       // the host's params, with the server's name
	Timeout time.Duration         // the server's timeouts.call; 0: none
	Life    context.Context       // the trunk's: cancelling an abandoned task outlives the call
	// Send sends the tools/call (params) on the trunk's path to the
	// server, the host's capabilities with the extension added when
	// withExtension.
	Send func(ctx context.Context, params json.RawMessage, withExtension bool) (json.RawMessage, error)
	// Park runs task as the upstream call of an exchange for a 2026-07-28
	// host (translate.Parked.Run), who can be asked for input only by a
	// result: the task's input requests (a followed task's through ask, or
	// those a 2025-11-25 server sends on its connection during a driven
	// one) are parked on the exchange, the host's call answered
	// input_required, and its retry answers them, as for a 2025 server
	// that asks during a call.
	Park func(ctx context.Context, task func(ctx context.Context, ask translate.AskHost) (json.RawMessage, error)) (json.RawMessage, error)
	// Abandoned is told of a driven task that could not be cancelled.
	Abandoned func(error)
	// Created is told the server's id of a 2025-11-25 host's task created
	// on a 2026-07-28 server (toExtension), and the interval it suggests,
	// whose status the trunk then watches for the host (Watch).
	Created func(id string, poll time.Duration)
}

// Run runs the call: a task the host asked for created in the server's
// model (createAcross); a task the host did not ask for run to its end
// for it, the server's 2026-07-28 task followed (Follower) and its
// 2025-11-25 task driven (drive), bounded by Timeout, its input requests
// put to the host.
func (c *Call) Run(ctx context.Context) (json.RawMessage, error) {
	switch c.How {
	case toExtension, to2025:
		res, err := createAcross(c.How, c.Forward, func(params json.RawMessage) (json.RawMessage, error) {
			return c.Send(ctx, params, c.How == toExtension) // the server makes a task only for a host with the extension
		})
		if _, id := Created(res, func(id string) string { return id }); c.How == toExtension && id != "" && c.Created != nil {
			c.Created(id, createdInterval(res))
		}
		return res, err
	case AsExtensionTask:
		c.Tool, _ = rawjson.StringField(c.Forward, "name")
		create := func(ctx context.Context) (json.RawMessage, error) { return c.Send(ctx, c.Forward, true) }
		return c.run(ctx, func(ctx context.Context, ask translate.AskHost) (json.RawMessage, error) {
			f := c.Follower
			if ask != nil {
				f.Ask = ask
			}
			return f.start(ctx, c.Life, create)
		})
	}
	d := drive{Server: c.Server, Conn: c.Conn, Abandoned: c.Abandoned,
		Create: func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return c.Send(ctx, params, false)
		}}
	return c.run(ctx, func(ctx context.Context, _ translate.AskHost) (json.RawMessage, error) {
		return d.run(ctx, c.Life, c.Forward) // the server's requests find the exchange as during any call
	})
}

// run runs a task for the host, bounded by Timeout: for a 2026-07-28 host
// as an exchange (Park), for a 2025-era one on its request.
func (c *Call) run(ctx context.Context, task func(context.Context, translate.AskHost) (json.RawMessage, error)) (json.RawMessage, error) {
	bounded := func(ctx context.Context, ask translate.AskHost) (json.RawMessage, error) {
		ctx, cancel := bound(ctx, c.Timeout)
		defer cancel()
		return task(ctx, ask)
	}
	if c.Host.Stateless() {
		return c.Park(ctx, bounded)
	}
	return bounded(ctx, nil)
}
