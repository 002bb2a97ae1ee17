package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// callUpstream sends a tools/call, prompts/get or resources/read of
// request rq to its owner. Where the host and the server ask for a call's
// input the same way (both inside results, or both with requests during
// the call) the call passes as sent; otherwise it is translated into the
// host's way: parked for a host that takes input_required results,
// fulfilled by asking the host for one that takes requests.
func (t *Trunk) callUpstream(ctx context.Context, rq request, c *upstream.Client, method string, params json.RawMessage) (json.RawMessage, error) {
	hr := rq.hostRequest
	defer t.hosts.began(hr.session, c.Name(), hr.id)()
	up := hr.server(c)
	switch hostInResults := hr.Stateless(); {
	case up.InputInResults() == hostInResults:
		// As sent. (A 2025 server may still answer input_required, as
		// go-sdk's does for a second round, and a 2025 client retry with
		// inputResponses and requestState: both pass.)
		return up.Call(ctx, method, params)
	case hostInResults:
		return t.parked.Call(ctx, translate.Parked{Upstream: up, Timeout: c.Spec().Timeouts.Call.D(), Host: hr.HostRequest, Caller: taskBinding(hr.session),
			Method: method, Params: params, Continues: func(first context.Context) { observe.NoteContinues(ctx, first) }})
	default:
		ask := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return t.askSession(ctx, hr.session, compactID(hr.id), c.Name(), method, params)
		}
		return translate.Fulfil(ctx, up, hr.HostRequest, ask, method, params)
	}
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
