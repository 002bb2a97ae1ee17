package proxy

import (
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/translate"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// hostRequest is a host's request as the trunk handles it: the facts of
// its revision and capabilities, and the session it came on (nil for the
// trunk's own requests), which is where what an upstream asks during it
// goes.
type hostRequest struct {
	translate.HostRequest
	session *Session
	// inRun: a code-mode run's call, whose result goes to the program
	// whole and never to the model (the run's own result has its budget,
	// trunk.codeMode.maxResultBytes).
	inRun bool
	// id is the request's JSON-RPC id as the host wrote it (nil for the
	// trunk's own): a server's request during a call on its behalf is
	// related to it (hostSet.began, Session.relate).
	id json.RawMessage
	// calls is what a server at the stateless revision is told of this
	// request in each call made for it (the zero value for a 2025-era
	// host, whose servers learnt it at initialize and logging/setLevel).
	calls upstream.CallOptions
}

// result shapes a routed result for the host's revision.
func (hr hostRequest) result(method string, res json.RawMessage) (json.RawMessage, error) {
	if hr.Stateless() {
		return translate.StatelessResult(method, res)
	}
	return translate.Result2025(res), nil
}

// server is c as the calls made for the request reach it.
func (hr hostRequest) server(c *upstream.Client) upstream.Caller { return c.For(hr.calls) }

// request is one host request as the trunk routes it: the facts of the
// host that sent it and the generation of the trunk's state it is handled
// under, passed from Handle down as a value.
type request struct {
	hostRequest
	st *state
}

// view is cat, a catalog of the request's generation, as the request's
// caller sees it under the generation's rules (proxy/access). A request
// of no session (the one-shot commands: the operator, on the operator's
// own config) sees all of it.
func (rq request) view(cat *catalog.Catalog) *catalog.Catalog {
	if rq.session != nil {
		return rq.st.sessionView(rq.session, cat)
	}
	return cat
}

// overrides are the overrides the request's caller calls a server's items
// under: the server's own (own), with the caller's profile's set over
// them, as its view was exported (access.Rules.Overrides).
func (rq request) overrides(server string, own config.Overrides) config.Overrides {
	if rq.session != nil {
		return rq.st.access.Overrides(*rq.session.caller.Load(), server, own)
	}
	return own
}
