package httpserve

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// router takes what the trunk writes to one host session, a line at a
// time, and puts each message on the HTTP stream it belongs to: a response
// on the stream of the POST that asked, progress on the stream of the
// request that carries its token, anything else (log messages, list
// changes, the trunk's requests to the host) on the session's GET stream
// when it has one, else on the newest POST stream still open, else in a
// backlog the next GET stream starts with.
type router struct {
	mu       sync.Mutex
	partial  []byte             // a line not yet ended
	waiting  map[string]*stream // request id (compact JSON) -> its POST's stream
	order    []*stream          // open POST streams, oldest first
	progress map[string]*stream // progress token (compact JSON) -> stream
	get      *stream            // the standalone GET stream, once opened
	backlog  [][]byte           // general messages before there was any stream
	known    map[string]*stream // every stream not yet read to its end, by id: Last-Event-ID finds it
	recent   []string           // known's ids, oldest first, for the bound
}

// knownLimit bounds the streams a session keeps for resumption.
const knownLimit = 128

// backlogLimit bounds what waits for a GET stream that may never come.
const backlogLimit = 256

func newRouter() *router {
	return &router{waiting: map[string]*stream{}, progress: map[string]*stream{}, known: map[string]*stream{}}
}

// Write receives the session's output; the connection writes whole
// messages, sometimes in pieces, each ending with a newline.
func (r *router) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.mu.Lock()
			r.partial = append(r.partial, p...)
			r.mu.Unlock()
			break
		}
		r.mu.Lock()
		line := append(r.partial, p[:i]...) // a copy: the caller reuses p
		r.partial = nil
		r.mu.Unlock()
		if len(bytes.TrimSpace(line)) > 0 {
			r.route(line)
		}
		p = p[i+1:]
	}
	return n, nil
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

func (r *router) route(line []byte) {
	env, err := jsonrpc.PeekEnvelope(line)
	if err != nil {
		return // the trunk writes only valid messages
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if env.IsResponse() {
		key := compact(env.ID)
		if st, ok := r.waiting[key]; ok {
			delete(r.waiting, key)
			r.closeLocked(st)
			st.send(line, true)
			return
		}
	}
	if env.Method == "notifications/progress" {
		if start, end, found, err := rawjson.FieldSpan(env.Params, "progressToken"); err == nil && found {
			if st, ok := r.progress[compact(env.Params[start:end])]; ok {
				st.send(line, false)
				return
			}
		}
	}
	switch {
	case r.get != nil:
		r.get.send(line, false)
	case len(r.order) > 0:
		r.order[len(r.order)-1].send(line, false)
	default:
		r.backlog = append(r.backlog, line)
		if len(r.backlog) > backlogLimit {
			r.backlog = r.backlog[1:]
		}
	}
}

// expect registers the stream of a POSTed request before the request is
// passed on, so that nothing sent for it can be missed. false when a
// request with that id is already in flight.
func (r *router) expect(id json.RawMessage, token json.RawMessage, st *stream) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := compact(id)
	if _, dup := r.waiting[key]; dup {
		return false
	}
	r.waiting[key] = st
	r.order = append(r.order, st)
	r.rememberLocked(st)
	if token != nil {
		r.progress[compact(token)] = st
	}
	return true
}

// closeLocked forgets an open stream's routes (its response is in).
func (r *router) closeLocked(st *stream) {
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

// openGet makes the session's GET stream (once) and hands it the backlog.
func (r *router) openGet(id string) *stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.get == nil {
		r.get = newStream(id)
		r.rememberLocked(r.get)
		for _, msg := range r.backlog {
			r.get.send(msg, false)
		}
		r.backlog = nil
	}
	return r.get
}

// inFlight counts the POSTed requests not yet answered.
func (r *router) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waiting)
}

// endAll ends every stream: the session is over.
func (r *router) endAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.order {
		st.end()
	}
	if r.get != nil {
		r.get.end()
	}
}

// rememberLocked keeps st findable by its id, forgetting the oldest
// stream past the bound.
func (r *router) rememberLocked(st *stream) {
	r.known[st.id] = st
	r.recent = append(r.recent, st.id)
	for len(r.recent) > knownLimit {
		old := r.recent[0]
		r.recent = r.recent[1:]
		if o := r.known[old]; o != nil && o != r.get {
			delete(r.known, old)
		}
	}
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
	if st != r.get {
		delete(r.known, st.id)
	}
}
