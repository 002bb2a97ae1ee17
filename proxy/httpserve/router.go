package httpserve

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// router takes the messages the trunk writes to one host session and puts
// each on the HTTP stream it belongs to: a response on the stream of the
// POST that asked, progress on the stream of the request that carries its
// token, a server's request or notification the trunk says belongs to a
// request (the label it writes it with, that request's id: WriteLabelled)
// on that request's stream while it is open, anything else (list
// changes, what belongs to no open request) on the session's GET stream
// when it is open, else on the newest POST stream still open, else on the
// GET stream before it opens, which the first GET starts with. What the
// streams keep is bounded by the session's budget (budget.go).
type router struct {
	cfg routerConfig // fixed at creation

	mu       sync.Mutex
	waiting  map[string]*stream // request id (compact JSON) -> its POST's stream
	order    []*stream          // open POST streams, oldest first
	progress map[string]*stream // progress token (compact JSON) -> stream
	get      *stream            // the standalone GET stream; until getOpen, what waits for one
	getOpen  bool
	known    map[string]*stream // every stream not yet read to its end, by id: Last-Event-ID finds it
	recent   []string           // known's ids, oldest first, for the bound
	seq      int64              // messages routed so far
	held     int64              // bytes the streams keep
	closed   bool
	lost     int       // notifications dropped since the last warning
	warned   time.Time // when the last warning was logged
}

// routerConfig is what a router is told at creation.
type routerConfig struct {
	session      string // its id, for the log
	streamBytes  int64  // what one stream may keep
	sessionBytes int64  // what the session's streams may keep together
	pool         *pool  // the budget of all sessions; nil for none
	logger       *slog.Logger
	onDrop       func(n int)         // counts notifications dropped; may be nil
	overflow     func(reason string) // closes the session; may be nil
}

// knownLimit bounds the streams a session keeps for resumption, besides
// those still waiting for their answer.
const knownLimit = 128

// warnEvery spaces a session's warnings about dropped notifications.
const warnEvery = 5 * time.Second

func newRouter(cfg routerConfig) *router {
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	r := &router{cfg: cfg, waiting: map[string]*stream{}, progress: map[string]*stream{}, known: map[string]*stream{}, get: newStream("g")}
	if cfg.pool != nil {
		cfg.pool.join(r)
	}
	return r
}

// WriteMessage receives one message of the session's (the router is the
// session's jsonrpc.LabelWriter) and routes a copy of it: the connection
// reuses msg.
func (r *router) WriteMessage(msg []byte) error {
	r.route(bytes.Clone(msg), "")
	return nil
}

// WriteLabelled is WriteMessage for a message the session says belongs
// to its host's request call (that request's id, compact JSON): it goes
// on that request's stream while it is open.
func (r *router) WriteLabelled(msg []byte, call string) error {
	r.route(bytes.Clone(msg), compact(json.RawMessage(call)))
	return nil
}

// compact is the key of a JSON value (an id or a token) whatever its
// spacing.
func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// droppable reports whether a message may be dropped past the budget: a
// notification, but not a list change (the host would never re-list).
func droppable(env jsonrpc.Envelope) bool {
	return len(env.ID) == 0 && env.Method != "" && !strings.HasSuffix(env.Method, "/list_changed")
}

func (r *router) route(line []byte, call string) {
	env, err := jsonrpc.PeekEnvelope(line)
	if err != nil {
		return // the trunk writes only valid messages
	}
	if env.Method == "" {
		call = "" // a response goes to its own request's stream
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	st, last := r.targetLocked(env, call)
	if st == nil {
		r.mu.Unlock()
		return
	}
	r.seq++
	r.chargeLocked(st.add(event{msg: line, seq: r.seq, droppable: droppable(env)}, last))
	r.boundStreamLocked(st)
	reason := r.boundSessionLocked()
	r.mu.Unlock()
	r.warn()
	if reason != "" {
		r.overflow(reason)
	}
	if r.cfg.pool != nil {
		r.cfg.pool.reclaim()
	}
}

// targetLocked is the stream a message goes on, and whether it is that
// stream's response; nil for a response nobody waits for (its request was
// cancelled). call is the key of the request the trunk says the message
// belongs to ("" when it does not say): its stream while it is open.
func (r *router) targetLocked(env jsonrpc.Envelope, call string) (*stream, bool) {
	if env.IsResponse() {
		key := compact(env.ID)
		st, ok := r.waiting[key]
		if !ok {
			return nil, false
		}
		delete(r.waiting, key)
		r.closeLocked(st)
		return st, true
	}
	if env.Method == "notifications/progress" {
		if start, end, found, err := rawjson.FieldSpan(env.Params, "progressToken"); err == nil && found {
			if st, ok := r.progress[compact(env.Params[start:end])]; ok {
				return st, false
			}
		}
	}
	if st, ok := r.waiting[call]; ok && call != "" {
		return st, false
	}
	if !r.getOpen && len(r.order) > 0 {
		return r.order[len(r.order)-1], false
	}
	return r.get, false
}

// expect registers the stream of a POSTed request before the request is
// passed on, so that nothing sent for it can be missed. false when a
// request with that id is already in flight.
func (r *router) expect(id json.RawMessage, token json.RawMessage, st *stream) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := compact(id)
	if _, dup := r.waiting[key]; dup || r.closed {
		return false
	}
	r.waiting[key] = st
	st.open = true
	r.order = append(r.order, st)
	r.rememberLocked(st)
	if token != nil {
		r.progress[compact(token)] = st
	}
	return true
}

// cancel ends the stream of a request the host cancelled: no answer comes
// for it (MCP's rule), its exchange ends now and its slot is free.
func (r *router) cancel(id json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := compact(id)
	if st, ok := r.waiting[key]; ok {
		delete(r.waiting, key)
		r.closeLocked(st)
		st.end(true)
	}
}

// closeLocked forgets an open stream's routes (its response is in).
func (r *router) closeLocked(st *stream) {
	st.open = false
	for i, o := range r.order {
		if o == st {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	for k, o := range r.progress {
		if o == st {
			delete(r.progress, k)
		}
	}
}

// openGet opens the session's GET stream, which starts with what waited
// for it.
func (r *router) openGet() *stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.getOpen {
		r.getOpen = true
		r.known[r.get.id] = r.get
	}
	return r.get
}

// inFlight counts the POSTed requests not yet answered.
func (r *router) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waiting)
}

// endAll ends every stream: the session is over, for reason. A request
// still waiting gets an error that says so, never an empty answer.
func (r *router) endAll(reason string) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	for _, st := range r.known {
		r.releaseLocked(st, true)
	}
	r.releaseLocked(r.get, true)
	r.chargeLocked(-r.held) // the answers kept go with the exchanges writing them
	r.closed = true
	r.answerLocked(reason, true)
	r.get.end(false)
	r.mu.Unlock()
	r.warn()
	if r.cfg.pool != nil {
		r.cfg.pool.leave(r)
	}
}

// answerAll answers every request still waiting with an error naming
// reason, but listens, which the trunk answers itself as it stops: at
// shutdown, before the trunk's own cancellation answers them with less
// telling errors (which are then dropped: nobody waits for them).
func (r *router) answerAll(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.answerLocked(reason, false)
	}
}

// answerLocked answers the waiting requests (and listens too) for reason.
func (r *router) answerLocked(reason string, listens bool) {
	for key, st := range r.waiting {
		if st.listen && !listens {
			continue
		}
		delete(r.waiting, key)
		r.closeLocked(st)
		msg := errorResponse(json.RawMessage(key), jsonrpc.CodeInternalError, "the request was not answered: "+reason)
		if added := st.add(event{msg: msg, seq: r.seq}, true); !r.closed {
			r.chargeLocked(added)
		}
	}
}

// rememberLocked keeps st findable by its id, forgetting the oldest
// streams already answered past the bound. recent is compacted only when
// it has grown to twice the bound, so that its cost is shared.
func (r *router) rememberLocked(st *stream) {
	r.known[st.id] = st
	r.recent = append(r.recent, st.id)
	if len(r.known) <= knownLimit && len(r.recent) <= 2*knownLimit {
		return
	}
	kept := r.recent[:0]
	for _, id := range r.recent {
		o := r.known[id]
		switch {
		case o == nil: // forgotten already
		case len(r.known) > knownLimit && o != r.get && !o.open:
			delete(r.known, id)
			r.releaseLocked(o, false)
		default:
			kept = append(kept, id)
		}
	}
	clear(r.recent[len(kept):])
	r.recent = kept
}

// find returns the stream a Last-Event-ID names.
func (r *router) find(id string) *stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.known[id]
}

// forget drops a stream that was read to its end.
func (r *router) forget(st *stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st != r.get && r.known[st.id] == st && !st.open {
		delete(r.known, st.id)
		r.releaseLocked(st, false)
	}
}
