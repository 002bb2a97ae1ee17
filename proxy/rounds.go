package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// callUpstream sends a tools/call, prompts/get or resources/read of
// request rq to its owner, translating multi-round-trip results between
// the host's revision and the upstream's.
func (t *Trunk) callUpstream(ctx context.Context, rq request, c *upstream.Client, method string, params json.RawMessage) (json.RawMessage, error) {
	hr := rq.hostRequest
	defer t.hosts.began(hr.session, c.Name(), hr.id)()
	hostStateless := hr.Stateless()
	upStateless := protocol.IsStateless(c.Init().ProtocolVersion)
	up := hr.server(c)
	switch {
	case hostStateless && !upStateless:
		return t.parked.Call(ctx, translate.Parked{Upstream: up, Timeout: c.Spec().Timeouts.Call.D(), Host: hr.HostRequest, Caller: taskBinding(hr.session),
			Method: method, Params: params, Continues: func(first context.Context) { observe.NoteContinues(ctx, first) }})
	case !hostStateless && upStateless:
		ask := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return t.askSession(ctx, hr.session, compactID(hr.id), c.Name(), method, params)
		}
		return translate.Fulfil(ctx, up, hr.HostRequest, ask, method, params)
	}
	// The same revision on both sides: as sent. (A 2025 server may still
	// answer input_required, as go-sdk's does for a second round, and a
	// 2025 client retry with inputResponses and requestState: both pass.)
	return up.Call(ctx, method, params)
}

// HandleOneShot is Handle for a caller that is no host connection (the
// one-shot commands: list, call): the result in the form a 2025-11-25 host
// gets it, without the members and reserved _meta keys of the stateless
// revision that an upstream may have sent.
func (t *Trunk) HandleOneShot(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := t.Handle(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return translate.Result2025(res), nil
}
