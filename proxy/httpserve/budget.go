package httpserve

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The budget bounds, in bytes, what the trunk keeps for hosts that do not
// read: a session's messages waiting for a GET stream that may never
// come, a stream's messages kept for resumption, and all of these
// together. A host gets only what it reads; a server that floods a
// session whose host does not read must cost the trunk a bounded amount,
// and never the other sessions their answers. Past a bound the oldest
// messages go first: those already written (kept only for resumption),
// then notifications never written, which are counted as dropped (status
// droppedNotifications, metric mcptrunk_notifications_dropped_total).
// Answers and the trunk's requests to a host are never dropped: a session
// that holds more of them than its budget is closed, with the reason in
// the log and in the error its host's calls get.

// A pool is the budget of every session of one handler together.
type pool struct {
	limit int64
	used  atomic.Int64

	mu      sync.Mutex // serialises reclaims; guards members
	members map[*router]struct{}

	memory releaser // gives the memory back once big holders have left
}

func newPool(limit int64) *pool {
	return &pool{limit: limit, members: map[*router]struct{}{}}
}

func (p *pool) join(r *router) {
	p.mu.Lock()
	p.members[r] = struct{}{}
	p.mu.Unlock()
}

func (p *pool) leave(r *router) {
	p.mu.Lock()
	delete(p.members, r)
	p.mu.Unlock()
	p.memory.left(p.used.Load())
}

// reclaim brings the pool back under its limit: the sessions holding the
// most give up first what they already wrote, then their oldest
// notifications; if answers alone are past the limit, the session holding
// the most is closed. Never called with a router's lock held.
func (p *pool) reclaim() {
	if p.used.Load() <= p.limit {
		return
	}
	p.mu.Lock()
	rs := make([]*router, 0, len(p.members))
	for r := range p.members {
		rs = append(rs, r)
	}
	held := make(map[*router]int64, len(rs))
	for _, r := range rs {
		held[r] = r.heldBytes()
	}
	slices.SortFunc(rs, func(a, b *router) int { return cmp.Compare(held[b], held[a]) })
	var victim *router
	for _, written := range []bool{true, false} {
		for _, r := range rs {
			if over := p.used.Load() - p.limit; over > 0 {
				r.shed(over, written)
			}
		}
	}
	if p.used.Load() > p.limit && len(rs) > 0 {
		victim = rs[0]
	}
	p.mu.Unlock()
	if victim != nil {
		victim.overflow("the trunk's buffers for all sessions are full, and this session holds the most answers its host has not read")
	}
}

// chargeLocked counts n more bytes kept (n < 0: fewer).
func (r *router) chargeLocked(n int64) {
	r.held += n
	if p := r.cfg.pool; p != nil {
		used := p.used.Add(n)
		if n > 0 {
			p.memory.held(used)
		}
	}
}

// heldBytes is what the session's streams keep.
func (r *router) heldBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// dropLocked drops the oldest message of st that may go (see
// stream.oldest); false when none may.
func (r *router) dropLocked(st *stream, written bool) bool {
	freed, lost := st.dropOldest(written)
	if freed == 0 {
		return false
	}
	r.chargeLocked(-freed)
	if lost {
		r.lostLocked(1)
	}
	return true
}

// boundStreamLocked holds st to keptEvents messages and streamBytes.
func (r *router) boundStreamLocked(st *stream) {
	for {
		n, b := st.size()
		if n <= keptEvents && b <= r.cfg.streamBytes {
			return
		}
		if !r.dropLocked(st, true) && !r.dropLocked(st, false) {
			return
		}
	}
}

// boundSessionLocked holds the session to sessionBytes, and returns why
// it must be closed when answers alone are past it.
func (r *router) boundSessionLocked() string {
	if r.held <= r.cfg.sessionBytes {
		return ""
	}
	for _, written := range []bool{true, false} {
		r.shedLocked(r.held-r.cfg.sessionBytes, written)
	}
	if r.held <= r.cfg.sessionBytes {
		return ""
	}
	return "its host has not read " + itoa(r.held) + " bytes of answers and requests, past the session's budget of " + itoa(r.cfg.sessionBytes) + " (trunk.http.maxSessionBufferedBytes)"
}

// shed drops the session's oldest messages that may go (see
// stream.oldest) until need bytes are freed or none may go.
func (r *router) shed(need int64, written bool) {
	r.mu.Lock()
	r.shedLocked(need, written)
	r.mu.Unlock()
	r.warn()
}

func (r *router) shedLocked(need int64, written bool) {
	streams := make([]*stream, 0, len(r.known)+1)
	for _, st := range r.known {
		streams = append(streams, st)
	}
	if !r.getOpen {
		streams = append(streams, r.get)
	}
	for freed := int64(0); freed < need; {
		var oldest *stream
		var seq int64
		for _, st := range streams {
			if s, ok := st.oldest(written); ok && (oldest == nil || s < seq) {
				oldest, seq = st, s
			}
		}
		if oldest == nil {
			return
		}
		before := r.held
		r.dropLocked(oldest, written)
		freed += before - r.held
	}
}

// releaseLocked lets the messages st keeps go (see stream.release).
func (r *router) releaseLocked(st *stream, keepAnswers bool) {
	freed, lost := st.release(keepAnswers)
	r.chargeLocked(-freed)
	if lost > 0 {
		r.lostLocked(lost)
	}
}

// lostLocked counts n notifications the host will never get.
func (r *router) lostLocked(n int) {
	r.lost += n
	if r.cfg.onDrop != nil {
		r.cfg.onDrop(n)
	}
}

// warn logs the notifications dropped since the last warning, at most
// once every warnEvery for the session.
func (r *router) warn() {
	r.mu.Lock()
	n := r.lost
	if n == 0 || time.Since(r.warned) < warnEvery {
		r.mu.Unlock()
		return
	}
	r.lost, r.warned = 0, time.Now()
	r.mu.Unlock()
	r.cfg.logger.Warn("dropped notifications: the session's host is not reading them (see trunk.http.maxSessionBufferedBytes)",
		"session", r.cfg.session, "dropped", n)
}

// overflow closes the session for reason.
func (r *router) overflow(reason string) {
	if r.cfg.overflow != nil {
		r.cfg.overflow(reason)
	}
}
