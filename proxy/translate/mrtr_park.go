package translate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Parking serves a stateless host's calls to 2025 upstreams. Such an
// upstream asks for input by sending the client requests in the middle of
// the call; the host, at its revision, can only be asked by a result. So
// the trunk keeps the upstream's call going in the background (an
// exchange), and each request the upstream sends meanwhile is parked, not
// answered; the host gets input_required with the parked requests and a
// state of the trunk's own, and its retry answers them, round after round,
// until the upstream's call returns, which the host gets as the result.
type Parking struct {
	signer *stateSigner
	life   context.Context   // ends when the trunk closes: every upstream call ends with it
	spawn  func(func()) bool // runs an upstream call on a goroutine the trunk waits for; false once it closes

	mu       sync.Mutex
	seq      uint64
	byID     map[uint64]*exchange
	inFlight map[string][]*exchange // server -> exchanges whose upstream call runs, oldest first
	held     map[heldKey]*exchange  // the trunk's own tasks/result of a task, by server and task (mrtr_held.go)
	holding  sync.Mutex             // one Hold at a time: a task's tasks/result is sent once
	// changed is closed, and replaced, whenever an exchange opens or
	// ends (see Watch).
	changed chan struct{}
}

// NewParking returns the parking of one trunk: upstream calls run on
// goroutines that spawn starts, and end at the latest when life does. A
// call spawn refuses (the trunk is closing) ends with errShuttingDown.
func NewParking(life context.Context, spawn func(func()) bool, secret []byte) *Parking {
	return &Parking{signer: newStateSigner(secret), life: life, spawn: spawn, byID: map[uint64]*exchange{}, inFlight: map[string][]*exchange{},
		held: map[heldKey]*exchange{}, changed: make(chan struct{})}
}

// changedLocked wakes whoever watches the count (see Watch).
func (p *Parking) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Parked is one host call to park: what the host asked, of which server,
// with the facts of the host's request.
type Parked struct {
	Upstream Upstream
	// Run, when set, is the upstream's call, made with the exchange's Ask
	// instead of Upstream.Call: for an upstream that asks for input itself
	// (a task the trunk follows) rather than through requests the server
	// sends on its connection, which find the exchange by its server.
	Run func(ctx context.Context, ask AskHost) (json.RawMessage, error)
	// Timeout is how long a round waits for the host's retry (the
	// server's timeouts.call).
	Timeout time.Duration
	Host    HostRequest
	Method  string
	Params  json.RawMessage
	// Caller is who the host is (its subject, its session when it has no
	// subject; tasks.Binding): the states of the exchange are bound to
	// it, so that another caller's retry with one gets the answer an
	// unknown state gets.
	Caller string
	// Continues, when set, is told of a retry the context of the
	// exchange's first round (observers link the two with it).
	Continues func(first context.Context)
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
	task                   string        // held (mrtr_held.go): the server's id of the task whose tasks/result this is
	caller                 string        // Parked.Caller: what its states are bound to

	mu      sync.Mutex
	hr      HostRequest           // the host request now waiting, or the last one
	round   uint32                // the round the next state is for
	asks    []*parkedAsk          // arrived, not yet given to the host
	given   map[string]*parkedAsk // given to the host this round, by key
	serving bool                  // a host request is waiting on the exchange
	expiry  *time.Timer           // between rounds: abandon when the host does not retry
	ended   bool
	keys    int // held: the keys given so far, so that none is given twice
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

// Call starts an exchange, or continues one when the host's params carry
// a state the trunk issued.
func (p *Parking) Call(ctx context.Context, pc Parked) (json.RawMessage, error) {
	method, params := pc.Method, pc.Params
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
		return p.await(ctx, p.start(ctx, pc, target, params, ""))
	}
	params, err = rawjson.DeleteFields(params, protocol.FieldInputResponses, protocol.FieldRequestState)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s: %v", method, err)
	}
	var ex *exchange
	if hasState {
		ex, err = p.resume(pc, state, target, responses)
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "%s %q: %v", method, target, err)
		}
	} else {
		ex = p.start(ctx, pc, target, params, "")
	}
	return p.await(ctx, ex)
}

// start runs the upstream's call in the background, on the trunk's own
// context: the host's request ends at the first input_required. task
// names the task of a held exchange (Hold), "" for a host's call.
func (p *Parking) start(ctx context.Context, pc Parked, target string, params json.RawMessage, task string) *exchange {
	first := context.WithoutCancel(ctx)
	upCtx, cancel := context.WithCancel(first)
	stop := context.AfterFunc(p.life, cancel)
	p.mu.Lock()
	p.seq++
	ex := &exchange{
		id: p.seq, server: pc.Upstream.Name(), method: pc.Method, target: target,
		timeout: pc.Timeout, first: first, cancel: cancel,
		done: make(chan struct{}), wake: make(chan struct{}, 1),
		hr: pc.Host, serving: task == "", task: task, caller: pc.Caller,
	}
	p.byID[ex.id] = ex
	if task != "" {
		p.held[heldKey{ex.server, task}] = ex
	} else {
		p.inFlight[ex.server] = append(p.inFlight[ex.server], ex)
	}
	p.changedLocked()
	p.mu.Unlock()
	finish := func(res json.RawMessage, err error) {
		p.mu.Lock()
		ex.res, ex.err = res, err
		p.inFlight[ex.server] = removeExchange(p.inFlight[ex.server], ex)
		if len(p.inFlight[ex.server]) == 0 {
			delete(p.inFlight, ex.server)
		}
		p.mu.Unlock()
		close(ex.done)
		if task != "" {
			p.end(ex, nil) // no host request waits on it to end it
		}
	}
	if !p.spawn(func() {
		defer stop()
		if pc.Run != nil {
			finish(pc.Run(upCtx, ex.Ask))
		} else {
			finish(pc.Upstream.Call(upCtx, pc.Method, params))
		}
	}) {
		stop()
		cancel()
		finish(nil, errShuttingDown)
	}
	return ex
}

// resume checks a host's retry against the exchange its state names and
// answers the requests given to the host in that round.
func (p *Parking) resume(pc Parked, state, target string, responses map[string]json.RawMessage) (*exchange, error) {
	server, method := pc.Upstream.Name(), pc.Method
	id, round, err := p.signer.verify(state, pc.Caller)
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
	ex.hr = pc.Host
	if pc.Continues != nil {
		pc.Continues(ex.first)
	}
	return ex, nil
}

// await waits for the upstream's result or its next requests.
func (p *Parking) await(ctx context.Context, ex *exchange) (json.RawMessage, error) {
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
		requests := make(map[string]InputRequest, len(ex.asks))
		for i, a := range ex.asks {
			key := "input-" + strconv.Itoa(i+1)
			ex.given[key] = a
			requests[key] = InputRequest{Method: a.method, Params: a.params}
		}
		ex.asks = nil
		ex.serving = false
		ex.expiry = time.AfterFunc(ex.timeout, func() {
			p.end(ex, fmt.Errorf("the host did not retry within %v (timeouts.call)", ex.timeout))
		})
		state := p.signer.sign(ex.id, ex.round, ex.caller)
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
func (p *Parking) end(ex *exchange, why error) {
	p.mu.Lock()
	if _, open := p.byID[ex.id]; open {
		delete(p.byID, ex.id)
		p.changedLocked()
	}
	if key := (heldKey{ex.server, ex.task}); ex.task != "" && p.held[key] == ex {
		delete(p.held, key)
	}
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

// errShuttingDown ends the exchanges of a trunk that closes.
var errShuttingDown = errors.New("mcptrunk is shutting down")

// CloseAll ends every exchange: the trunk is shutting down.
func (p *Parking) CloseAll() {
	p.mu.Lock()
	open := make([]*exchange, 0, len(p.byID))
	for _, ex := range p.byID {
		open = append(open, ex)
	}
	p.mu.Unlock()
	for _, ex := range open {
		p.end(ex, errShuttingDown)
	}
}

// Count is how many exchanges are open.
func (p *Parking) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}

// Watch is how many exchanges are open, and a channel closed when that
// may have changed: a caller waits for a count without polling.
func (p *Parking) Watch() (int, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID), p.changed
}

// Current is the exchange an upstream's request (params) during a call
// belongs to. A request that names its task in its related-task _meta
// belongs to the trunk's held tasks/result of that task, when there is one
// (mrtr_held.go); a held exchange takes no other request. Otherwise a
// request over stdio does not say which call it is for, so the trunk
// picks: the oldest exchange with a host request waiting on it (an
// exchange between rounds is waiting for the host, and one whose host gave
// up, say because the host could not answer, must not swallow the requests
// of the next call), else the oldest in flight. With several calls waiting
// on one server at once it cannot tell: the trunk asks it only when one
// caller has calls in flight on the server, or for its one host.
func (p *Parking) Current(server string, params json.RawMessage) *exchange {
	if ex := p.HeldFor(server, params); ex != nil {
		return ex
	}
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

// HeldFor is the exchange a server's request names by the task the trunk
// holds for it (mrtr_held.go), else nil: exact, however many calls are
// in flight on server.
func (p *Parking) HeldFor(server string, params json.RawMessage) *exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[heldKey{server, relatedTask(params)}]
}

// Ask parks one of the upstream's requests until the host answers it in
// a retry, the exchange ends, or the upstream cancels it.
func (ex *exchange) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ex.mu.Lock()
	if need, known := capabilityFor[method]; !known || !ex.hr.Can(need) {
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
		// end answers the parked requests, then cancels the call: its
		// answer says why, and is there already when that is the cause.
		select {
		case r := <-a.reply:
			return r.res, r.err
		default:
		}
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
