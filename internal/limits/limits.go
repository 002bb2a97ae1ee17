// Package limits counts callers' requests against trunk.limits and says,
// for one refused, which rule refused it and when to try again.
//
// Each rule with a window is a generic cell rate algorithm (GCRA), the
// token bucket without a refill timer: one time per count (its
// theoretical arrival time) says how full the bucket is, so a count costs
// a map entry and a check a subtraction. A daily rule is a count per UTC
// day. Counts live in this process, or in Redis (Options.Shared), where
// one script does the same check atomically for every replica that
// shares it.
//
//	l := limits.New(cfg.Trunk.Limits, nil)
//	r, refused, err := l.Allow(ctx, limits.Request{Subject: "alice", Server: "weather", Tool: "forecast"})
//	switch {
//	case refused && err != nil:
//		return err // the shared store is down and the check fails closed
//	case refused:
//		return r.Error()
//	}
package limits

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/redisconn"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
)

// Code is the JSON-RPC error code of a request a limit refused (429, as
// HTTP says it, in the range JSON-RPC leaves to servers).
const Code = -32029

// MetaKey is the _meta key of a refused tools/call's tool error: its
// value is the Refusal, as the data of Code's error is.
const MetaKey = "mcptrunk/limit"

// metaKey and codeText are what a message must hold to carry a refusal:
// most answers are passed over without decoding.
var metaKey, codeText = []byte(`"` + MetaKey + `"`), []byte(strconv.Itoa(Code))

// Request is what a rule matches and counts a request by.
type Request struct {
	Subject string // "" for a caller without an identity (the stdio host, the static token)
	Server  string
	Tool    string // the tool's name at its server, for tools/call; else ""
}

// Refusal says why a request was refused and when it may be tried again.
type Refusal struct {
	Limit      string    `json:"limit"` // the rule's name
	Requests   int       `json:"requests"`
	Window     string    `json:"window"`     // a duration, or "day" for a daily quota
	RetryAfter int       `json:"retryAfter"` // whole seconds, rounded up (HTTP's Retry-After)
	RetryAt    time.Time `json:"retryAt"`
}

// Message is the refusal in words, for the model and the person.
func (r Refusal) Message() string {
	requests := "requests"
	if r.Requests == 1 {
		requests = "request"
	}
	return fmt.Sprintf("limit %q refused this request (%d %s per %s): try again in %ds, at %s",
		r.Limit, r.Requests, requests, r.Window, r.RetryAfter, r.RetryAt.UTC().Format(time.RFC3339))
}

// Error is the refusal as a JSON-RPC error: Code, the message, and the
// refusal as its data.
func (r Refusal) Error() *jsonrpc.Error {
	data, _ := json.Marshal(r)
	return &jsonrpc.Error{Code: Code, Message: r.Message(), Data: data}
}

// ToolResult is the refusal as a tools/call result: a tool error the
// model reads, with the refusal under MetaKey.
func (r Refusal) ToolResult() json.RawMessage {
	res, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": r.Message()}},
		"isError": true,
		"_meta":   map[string]any{MetaKey: r},
	})
	return res
}

// RetryAfterOf finds a refusal in a response message (a JSON-RPC error of
// Code, or a result carrying MetaKey) and returns its retryAfter in
// seconds; isError reports which of the two it was.
func RetryAfterOf(msg []byte) (seconds int, isError, ok bool) {
	var m struct {
		Error *struct {
			Code int     `json:"code"`
			Data Refusal `json:"data"`
		} `json:"error"`
		Result *struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if !bytes.Contains(msg, metaKey) && !bytes.Contains(msg, codeText) {
		return 0, false, false // the usual answer: no decoding
	}
	if json.Unmarshal(msg, &m) != nil {
		return 0, false, false
	}
	switch {
	case m.Error != nil && m.Error.Code == Code:
		return m.Error.Data.RetryAfter, true, true
	case m.Result != nil && m.Result.Meta[MetaKey] != nil:
		var r Refusal
		if json.Unmarshal(m.Result.Meta[MetaKey], &r) == nil {
			return r.RetryAfter, false, true
		}
	}
	return 0, false, false
}

// InResult finds the refusal a refused tools/call's result carries.
func InResult(res json.RawMessage) (Refusal, bool) {
	if !bytes.Contains(res, metaKey) {
		return Refusal{}, false
	}
	var m struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var r Refusal
	if json.Unmarshal(res, &m) != nil || m.Meta[MetaKey] == nil || json.Unmarshal(m.Meta[MetaKey], &r) != nil {
		return Refusal{}, false
	}
	return r, true
}

// rule is one config.Limit with its GCRA constants.
type rule struct {
	name     string
	limit    config.Limit
	interval time.Duration // the window over requests: one request's cost
	id       string        // the rule as configured: counts survive a reload that keeps it
	tag      string        // id hashed short: its counts' keys in the shared store
}

func (r *rule) matches(req Request) bool {
	if ok, _ := path.Match(r.limit.Server, req.Server); r.limit.Server != "" && !ok {
		return false
	}
	if r.limit.Tool == "" {
		return true
	}
	ok, _ := path.Match(r.limit.Tool, req.Tool)
	return req.Tool != "" && ok
}

// key is the count a request falls in under r: base (the rule's id in
// memory, its tag in the store) and the values it counts by, the subject
// as Allow hashed it.
func (r *rule) key(base string, req Request) string {
	var b strings.Builder
	b.WriteString(base)
	for _, by := range r.limit.By {
		b.WriteByte(0)
		switch by {
		case config.LimitBySubject:
			b.WriteString(req.Subject)
		case config.LimitByServer:
			b.WriteString(req.Server)
		case config.LimitByTool:
			b.WriteString(req.Tool)
		}
	}
	return b.String()
}

// refusal is r's refusal of a request at now, to be tried again after wait.
func (r *rule) refusal(now time.Time, wait time.Duration) Refusal {
	window := r.limit.Window.D().String()
	if r.limit.Daily {
		window = "day"
	}
	return Refusal{Limit: r.name, Requests: r.limit.Requests, Window: window,
		RetryAfter: int((wait + time.Second - 1) / time.Second), RetryAt: now.Add(wait).Truncate(time.Millisecond)}
}

// Options say where a Limiter keeps its counts. Nil keeps them in this
// process.
type Options struct {
	// Shared, when set, keeps the counts in Redis: each check is one
	// script run there (EVALSHA), which reads and updates every count the
	// request falls in at once, on the store's clock, so that replicas
	// sharing the store hold each limit exactly, as one process would.
	Shared *redisconn.Client
	// Prefix begins the keys of the counts in Shared (default
	// DefaultPrefix), so that trunks of different teams can share a Redis.
	Prefix string
	// Store names Shared in the errors of a check it could not make: its
	// address, never its credentials.
	Store string
	// AllowUnavailable lets a request through, uncounted, when Shared
	// cannot be asked; otherwise (the default) the request is refused: a
	// limit that cannot be checked does not hold.
	AllowUnavailable bool
}

// DefaultPrefix begins the keys of the counts in a shared store.
const DefaultPrefix = "mcptrunk:"

// UnavailableError is a check the shared store could not make.
type UnavailableError struct {
	Limit   string // the first rule the request fell under
	Store   string // Options.Store
	Allowed bool   // Options.AllowUnavailable: the request went through uncounted
	Err     error
}

func (e *UnavailableError) Error() string {
	then := "refused, as trunk.state.onUnavailable says"
	if e.Allowed {
		then = "let through uncounted, as trunk.state.onUnavailable says"
	}
	return fmt.Sprintf("limit %q could not be checked: the state store %s is unavailable (%v): %s", e.Limit, e.Store, e.Err, then)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// RPCError is the refusal as a JSON-RPC error: the store is unavailable
// (jsonrpc.CodeUnavailable), as a server not connected is.
func (e *UnavailableError) RPCError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeUnavailable, Message: e.Error()}
}

// ToolResult is the refusal as a tools/call result: a tool error the
// model reads.
func (e *UnavailableError) ToolResult() json.RawMessage {
	res, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": e.Error()}}, "isError": true})
	return res
}

// Limiter holds the counts of every rule, in this process or in the
// shared store. Safe for concurrent use.
type Limiter struct {
	// fixed at creation
	shared           *redisconn.Client
	prefix, store    string
	allowUnavailable bool
	// clock is the time of each check: nil is time.Now in this process,
	// and the store's own clock in a shared one (tests set it).
	clock func() time.Time

	rules atomic.Pointer[[]rule] // replaced whole by Configure

	mu   sync.Mutex
	tat  map[string]time.Time // per count: when its bucket is full again
	days map[string]dayCount  // per count of a daily rule
	adds int                  // new counts since the last sweep
}

// dayCount is a daily rule's count on one UTC day.
type dayCount struct {
	day time.Time
	n   int
}

// New is a Limiter for rules (trunk.limits); none lets every request go.
func New(rules map[string]config.Limit, opts *Options) *Limiter {
	if opts == nil {
		opts = &Options{}
	}
	l := &Limiter{shared: opts.Shared, prefix: opts.Prefix, store: opts.Store, allowUnavailable: opts.AllowUnavailable,
		tat: map[string]time.Time{}, days: map[string]dayCount{}}
	if l.prefix == "" {
		l.prefix = DefaultPrefix
	}
	l.Configure(rules)
	return l
}

// Configure replaces the rules (a reload). The counts of a rule that is
// unchanged, name and all, go on; the others' are dropped (in a shared
// store, left to expire).
func (l *Limiter) Configure(rules map[string]config.Limit) {
	var rs []rule
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		lim := rules[name]
		if lim.Requests < 1 || lim.Window <= 0 && !lim.Daily {
			continue // refused by Parse
		}
		id, _ := json.Marshal(struct {
			Name string
			L    config.Limit
		}{name, lim})
		sum := sha256.Sum256(id)
		rs = append(rs, rule{name: name, limit: lim, interval: lim.Window.D() / time.Duration(lim.Requests),
			id: string(id), tag: hex.EncodeToString(sum[:8])})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rules.Store(&rs)
	kept := func(k string) bool {
		return slices.ContainsFunc(rs, func(r rule) bool { return strings.HasPrefix(k, r.id+"\x00") || k == r.id })
	}
	for k := range l.tat {
		if !kept(k) {
			delete(l.tat, k)
		}
	}
	for k := range l.days {
		if !kept(k) {
			delete(l.days, k)
		}
	}
}

// Rules reports whether any rule is configured.
func (l *Limiter) Rules() bool {
	rs := l.rules.Load()
	return rs != nil && len(*rs) > 0
}

// Allow counts req against every rule that matches it, or, when one of
// them has no room, counts it nowhere and returns that rule's refusal
// (the one whose retry is furthest off, when several refuse).
//
// With a shared store that cannot be asked, err is an
// *UnavailableError, and refused says what Options.AllowUnavailable
// chose: true, the request must be refused with err; false, it goes
// through uncounted. When ctx ends first, err is its error.
func (l *Limiter) Allow(ctx context.Context, req Request) (r Refusal, refused bool, err error) {
	rs := l.rules.Load()
	if rs == nil || len(*rs) == 0 {
		return Refusal{}, false, nil
	}
	var buf [8]*rule
	matched := buf[:0]
	for i := range *rs {
		if r := &(*rs)[i]; r.matches(req) {
			matched = append(matched, r)
		}
	}
	if len(matched) == 0 {
		return Refusal{}, false, nil
	}
	req.Subject = statestore.Subject(req.Subject)
	if l.shared != nil {
		return l.allowShared(ctx, matched, req)
	}
	r, refused = l.allowHere(matched, req)
	return r, refused, nil
}

// allowHere is Allow with the counts in this process.
func (l *Limiter) allowHere(matched []*rule, req Request) (Refusal, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.clock != nil {
		now = l.clock()
	}
	type hit struct {
		key   string
		tat   time.Time
		daily bool
	}
	var hits []hit
	var refusal Refusal
	refused := false
	refuse := func(r *rule, wait time.Duration) {
		if f := r.refusal(now, wait); !refused || f.RetryAfter > refusal.RetryAfter {
			refusal = f
		}
		refused = true
	}
	today := now.UTC().Truncate(24 * time.Hour)
	for _, r := range matched {
		k := r.key(r.id, req)
		if r.limit.Daily {
			if c := l.days[k]; c.day.Equal(today) && c.n >= r.limit.Requests {
				refuse(r, today.Add(24*time.Hour).Sub(now))
			} else {
				hits = append(hits, hit{key: k, daily: true})
			}
			continue
		}
		tat := l.tat[k]
		if tat.Before(now) {
			tat = now
		}
		next := tat.Add(r.interval)
		// The bucket holds requests: next may run a whole window ahead.
		if allowAt := next.Add(-r.limit.Window.D()); now.Before(allowAt) {
			refuse(r, allowAt.Sub(now))
			continue
		}
		hits = append(hits, hit{key: k, tat: next})
	}
	if refused {
		return refusal, true
	}
	for _, h := range hits {
		if h.daily {
			c := l.days[h.key]
			if !c.day.Equal(today) {
				c = dayCount{day: today}
				l.adds++
			}
			c.n++
			l.days[h.key] = c
			continue
		}
		if _, ok := l.tat[h.key]; !ok {
			l.adds++
		}
		l.tat[h.key] = h.tat
	}
	if l.adds > 1024 && l.adds > (len(l.tat)+len(l.days))/2 {
		l.sweep(now, today)
	}
	return Refusal{}, false
}

// sweep drops the counts that are back to full: a bucket refilled, a
// daily count of an earlier day. Absent means full.
func (l *Limiter) sweep(now, today time.Time) {
	for k, tat := range l.tat {
		if !tat.After(now) {
			delete(l.tat, k)
		}
	}
	for k, c := range l.days {
		if !c.day.Equal(today) {
			delete(l.days, k)
		}
	}
	l.adds = 0
}

// Lines describe each rule for mcptrunk check, in name order.
func Lines(rules map[string]config.Limit) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		l := rules[name]
		what := "every request"
		if l.Tool != "" {
			what = "calls of tools " + l.Tool
		}
		if l.Server != "" {
			what += " of servers " + l.Server
		}
		per := l.Window.D().String()
		if l.Daily {
			per = "day (UTC)"
		}
		out = append(out, fmt.Sprintf("  %s: %d per %s, %s, counted per %s", name, l.Requests, per, what, strings.Join(l.By, " and ")))
	}
	return out
}
