package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// parking serves a stateless host's calls to legacy upstreams. Such an
// upstream asks for input by sending the client requests in the middle of
// the call; the host, at its revision, can only be asked by a result. So
// the trunk keeps the upstream's call going in the background (an
// exchange), and each request the upstream sends meanwhile is parked, not
// answered; the host gets input_required with the parked requests and a
// state of the trunk's own, and its retry answers them, round after round,
// until the upstream's call returns, which the host gets as the result.
type parking struct {
	signer *stateSigner

	mu       sync.Mutex
	seq      uint64
	byID     map[uint64]*exchange
	inFlight map[string][]*exchange // server -> exchanges whose upstream call runs, oldest first
}

func newParking() *parking {
	return &parking{signer: newStateSigner(), byID: map[uint64]*exchange{}, inFlight: map[string][]*exchange{}}
}

// exchange is one host call translated into rounds.
type exchange struct {
	id                     uint64
	server, method, target string          // what the host called (target: the name or URI)
	timeout                time.Duration   // how long a round may wait for the host's retry
	first                  context.Context // the first round's, without its end: for the observers of later rounds
	cancel                 context.CancelFunc
	done                   chan struct{} // closed when the upstream's call returned
	res                    json.RawMessage
	err                    error
	wake                   chan struct{} // an upstream request arrived

	mu      sync.Mutex
	hr      hostRequest           // the host request now waiting, or the last one
	round   uint32                // the round the next state is for
	asks    []*parkedAsk          // arrived, not yet given to the host
	given   map[string]*parkedAsk // given to the host this round, by key
	serving bool                  // a host request is waiting on the exchange
	expiry  *time.Timer           // between rounds: abandon when the host does not retry
	ended   bool
}

// parkedAsk is one request of the upstream's, waiting for the host.
type parkedAsk struct {
	method string
	params json.RawMessage
	reply  chan askReply // buffered: an answer never waits for a reader
}

type askReply struct {
	res json.RawMessage
	err error
}

// gatherWindow is how long the trunk waits, after an upstream's first
// request of a round, for others it sends at the same time (a server
// asking several things at once), so they reach the host in one round. A
// request that comes later is simply the next round.
const gatherWindow = 20 * time.Millisecond

// call starts an exchange, or continues one when the host's params carry
// a state the trunk issued.
func (p *parking) call(ctx context.Context, t *Trunk, c *upstream.Client, method string, params json.RawMessage) (json.RawMessage, error) {
	target, _ := rawjson.StringField(params, "name")
	if method == "resources/read" {
		target, _ = rawjson.StringField(params, "uri")
	}
	hasState := rawjson.HasField(params, protocol.FieldRequestState)
	state, err := rawjson.StringField(params, protocol.FieldRequestState)
	if hasState && err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.requestState must be a string", method)
	}
	var responses map[string]json.RawMessage
	if start, end, found, err := rawjson.FieldSpan(params, protocol.FieldInputResponses); err == nil && found {
		if json.Unmarshal(params[start:end], &responses) != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: params.inputResponses must be an object of results by key", method)
		}
	}
	if hasState && !strings.HasPrefix(state, statePrefix) {
		// Not the trunk's state but the upstream's own, from an
		// input_required result it sent itself: a new call to it with the
		// host's answers, as the host would make it directly; the upstream
		// checks its own state.
		return p.await(ctx, p.start(ctx, t, c, method, target, params))
	}
	params, err = rawjson.DeleteFields(params, protocol.FieldInputResponses, protocol.FieldRequestState)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	var ex *exchange
	if hasState {
		ex, err = p.resume(ctx, state, c.Name(), method, target, responses)
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s %q: %v", method, target, err)
		}
	} else {
		ex = p.start(ctx, t, c, method, target, params)
	}
	return p.await(ctx, ex)
}

// start runs the upstream's call in the background, on the trunk's own
// context: the host's request ends at the first input_required.
func (p *parking) start(ctx context.Context, t *Trunk, c *upstream.Client, method, target string, params json.RawMessage) *exchange {
	first := context.WithoutCancel(ctx)
	upCtx, cancel := context.WithCancel(first)
	stop := context.AfterFunc(t.life, cancel)
	p.mu.Lock()
	p.seq++
	ex := &exchange{
		id: p.seq, server: c.Name(), method: method, target: target,
		timeout: c.Spec().Timeouts.Call.D(), first: first, cancel: cancel,
		done: make(chan struct{}), wake: make(chan struct{}, 1),
		hr: hostRequestOf(ctx), serving: true,
	}
	p.byID[ex.id] = ex
	p.inFlight[ex.server] = append(p.inFlight[ex.server], ex)
	p.mu.Unlock()
	t.workers.Go(func() {
		defer stop()
		res, err := c.Call(upCtx, method, params)
		p.mu.Lock()
		ex.res, ex.err = res, err
		p.inFlight[ex.server] = removeExchange(p.inFlight[ex.server], ex)
		if len(p.inFlight[ex.server]) == 0 {
			delete(p.inFlight, ex.server)
		}
		p.mu.Unlock()
		close(ex.done)
	})
	return ex
}

// resume checks a host's retry against the exchange its state names and
// answers the requests given to the host in that round.
func (p *parking) resume(ctx context.Context, state, server, method, target string, responses map[string]json.RawMessage) (*exchange, error) {
	id, round, err := p.signer.verify(state)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	ex := p.byID[id]
	p.mu.Unlock()
	if ex == nil || ex.server != server || ex.method != method || ex.target != target {
		return nil, errBadState
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.ended || ex.serving || ex.round != round || !ex.expiry.Stop() {
		return nil, errBadState
	}
	for key, a := range ex.given {
		if res, ok := responses[key]; ok {
			a.reply <- askReply{res: res}
		} else {
			a.reply <- askReply{err: jsonrpc.Errorf(jsonrpc.CodeInternalError, "the host's retry had no answer to input request %q", key)}
		}
	}
	ex.given = nil
	ex.round++
	ex.serving = true
	ex.hr = hostRequestOf(ctx)
	noteContinues(ctx, ex.first)
	return ex, nil
}

// await waits for the upstream's result or its next requests.
func (p *parking) await(ctx context.Context, ex *exchange) (json.RawMessage, error) {
	for {
		select {
		case <-ex.done:
			p.end(ex, nil)
			return ex.res, ex.err
		case <-ctx.Done():
			p.end(ex, fmt.Errorf("the host cancelled %s", ex.method))
			return nil, ctx.Err()
		case <-ex.wake:
		}
		gather := time.NewTimer(gatherWindow)
		select {
		case <-ex.done:
		case <-gather.C:
		}
		gather.Stop()
		select {
		case <-ex.done: // the result wins over requests sent before it
			p.end(ex, nil)
			return ex.res, ex.err
		default:
		}
		ex.mu.Lock()
		if len(ex.asks) == 0 {
			ex.mu.Unlock()
			continue // answered already, or the call returned first
		}
		ex.given = make(map[string]*parkedAsk, len(ex.asks))
		requests := make(map[string]inputRequest, len(ex.asks))
		for i, a := range ex.asks {
			key := "input-" + strconv.Itoa(i+1)
			ex.given[key] = a
			requests[key] = inputRequest{Method: a.method, Params: a.params}
		}
		ex.asks = nil
		ex.serving = false
		ex.expiry = time.AfterFunc(ex.timeout, func() {
			p.end(ex, fmt.Errorf("the host did not retry within %v (timeouts.call)", ex.timeout))
		})
		state := p.signer.sign(ex.id, ex.round)
		ex.mu.Unlock()
		out, err := json.Marshal(inputRequired{ResultType: protocol.ResultTypeInputRequired, InputRequests: requests, RequestState: &state})
		if err != nil {
			p.end(ex, err)
			return nil, err
		}
		return out, nil
	}
}

// end forgets an exchange: its upstream call is cancelled if it still
// runs, and every request still parked is answered with why.
func (p *parking) end(ex *exchange, why error) {
	p.mu.Lock()
	delete(p.byID, ex.id)
	p.mu.Unlock()
	ex.mu.Lock()
	if ex.ended {
		ex.mu.Unlock()
		return
	}
	ex.ended = true
	if ex.expiry != nil {
		ex.expiry.Stop()
	}
	if why == nil {
		why = fmt.Errorf("the call ended")
	}
	for _, a := range ex.asks {
		a.reply <- askReply{err: jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", why)}
	}
	for _, a := range ex.given {
		a.reply <- askReply{err: jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", why)}
	}
	ex.asks, ex.given = nil, nil
	ex.mu.Unlock()
	ex.cancel()
}

// closeAll ends every exchange: the trunk is shutting down.
func (p *parking) closeAll() {
	p.mu.Lock()
	open := make([]*exchange, 0, len(p.byID))
	for _, ex := range p.byID {
		open = append(open, ex)
	}
	p.mu.Unlock()
	for _, ex := range open {
		p.end(ex, fmt.Errorf("mcptrunk is shutting down"))
	}
}

// count is how many exchanges are open.
func (p *parking) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}

// current is the exchange an upstream's request during a call belongs to.
// Over stdio a request does not say which call it is for, so the trunk
// picks: the oldest exchange with a host request waiting on it (an
// exchange between rounds is waiting for the host, and one whose host gave
// up, say because the host could not answer, must not swallow the requests
// of the next call), else the oldest in flight. With several calls waiting
// on one server at once, a request may reach another of them, whose host
// then answers it.
func (p *parking) current(server string) *exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.inFlight[server]
	for _, ex := range list {
		ex.mu.Lock()
		serving := ex.serving && !ex.ended
		ex.mu.Unlock()
		if serving {
			return ex
		}
	}
	if len(list) > 0 {
		return list[0]
	}
	return nil
}

// ask parks one of the upstream's requests until the host answers it in
// a retry, the exchange ends, or the upstream cancels it.
func (ex *exchange) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ex.mu.Lock()
	if need, known := capabilityFor[method]; !known || !ex.hr.can(need) {
		ex.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q: the host did not declare the %s capability for this request", method, capabilityFor[method])
	}
	if ex.ended {
		ex.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "method %q: the call it belongs to has ended", method)
	}
	if p, err := rawjson.ReplaceReservedMeta(params, nil); err == nil {
		params = p
	}
	if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		// A request without params (server-everything's roots/list): an
		// input request has them, and clients decode them.
		params = json.RawMessage(`{}`)
	}
	a := &parkedAsk{method: method, params: params, reply: make(chan askReply, 1)}
	ex.asks = append(ex.asks, a)
	ex.mu.Unlock()
	select {
	case ex.wake <- struct{}{}:
	default:
	}
	select {
	case r := <-a.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func removeExchange(list []*exchange, ex *exchange) []*exchange {
	for i, e := range list {
		if e == ex {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}
