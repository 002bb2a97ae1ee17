package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Progress maps the trunk's progress tokens to the session whose request
// carried them and the token it chose. The zero value is ready.
type Progress[S comparable] struct {
	seq    atomic.Int64
	owners sync.Map // the trunk's token (compact raw JSON) -> owner[S]
}

type owner[S comparable] struct {
	session S
	token   json.RawMessage
}

// Claim replaces the progress token of s's request params with one unique
// to the trunk, until release. Params without a token come back as they
// are.
func (p *Progress[S]) Claim(s S, params json.RawMessage) (json.RawMessage, func()) {
	token := rawjson.MetaValue(params, "progressToken")
	if token == nil {
		return params, func() {}
	}
	mine := json.RawMessage(strconv.Quote("mcptrunk-p" + strconv.FormatInt(p.seq.Add(1), 10)))
	out, err := replaceToken(params, mine)
	if err != nil {
		return params, func() {}
	}
	key := string(mine)
	p.owners.Store(key, owner[S]{session: s, token: append(json.RawMessage(nil), token...)})
	return out, func() { p.owners.Delete(key) }
}

// Owner finds the session of the trunk's token in a server's
// notifications/progress params, and returns the params with the session's
// own token back in.
func (p *Progress[S]) Owner(params json.RawMessage) (S, json.RawMessage, bool) {
	var zero S
	start, end, found, err := rawjson.FieldSpan(params, "progressToken")
	if err != nil || !found {
		return zero, nil, false
	}
	key, ok := compactKey(params[start:end])
	if !ok {
		return zero, nil, false
	}
	v, ok := p.owners.Load(key)
	if !ok {
		return zero, nil, false
	}
	o := v.(owner[S])
	out, err := rawjson.ReplaceField(params, "progressToken", o.token)
	if err != nil {
		return zero, nil, false
	}
	return o.session, out, true
}

// Forget drops the tokens of a session that went.
func (p *Progress[S]) Forget(s S) {
	p.owners.Range(func(k, v any) bool {
		if v.(owner[S]).session == s {
			p.owners.Delete(k)
		}
		return true
	})
}

// replaceToken sets params._meta.progressToken.
func replaceToken(params, token json.RawMessage) (json.RawMessage, error) {
	start, end, _, err := rawjson.FieldSpan(params, "_meta")
	if err != nil {
		return nil, err
	}
	meta, err := rawjson.ReplaceField(params[start:end], "progressToken", token)
	if err != nil {
		return nil, err
	}
	return rawjson.ReplaceField(params, "_meta", meta)
}

// Live is the set of progress tokens of requests in flight whose tokens
// pass unchanged (one host, sharing off): progress a server sends with any
// other token concerns no active request, and the spec forbids sending it
// on. A token is live while a request holding it is neither released nor
// cancelled (its context done: the host's notifications/cancelled ends it
// at once, before the server hears of it). The zero value is ready.
type Live struct {
	mu     sync.Mutex
	tokens map[string][]*holder // compact raw JSON token -> the requests holding it
}

// Hold records the progress token of a request's params as live while ctx
// lasts, until release. Params without a token hold nothing, and cost no
// allocation.
func (l *Live) Hold(ctx context.Context, params json.RawMessage) (release func()) {
	key, ok := compactKey(rawjson.MetaValue(params, "progressToken"))
	if !ok {
		return noRelease
	}
	return l.hold(&holder{ctx}, key)
}

func noRelease() {}

// holder is one request holding a token: its identity, and its context.
type holder struct{ ctx context.Context }

func (l *Live) hold(h *holder, key string) (release func()) {
	l.mu.Lock()
	if l.tokens == nil {
		l.tokens = map[string][]*holder{}
	}
	l.tokens[key] = append(l.tokens[key], h)
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		if rest := slices.DeleteFunc(l.tokens[key], func(o *holder) bool { return o == h }); len(rest) > 0 {
			l.tokens[key] = rest
		} else {
			delete(l.tokens, key)
		}
		l.mu.Unlock()
	}
}

// Has reports whether the progressToken of a server's
// notifications/progress params is held by a request in flight.
func (l *Live) Has(params json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(params, "progressToken")
	if err != nil || !found {
		return false
	}
	key, ok := compactKey(params[start:end])
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.tokens[key] {
		if h.ctx.Err() == nil {
			return true
		}
	}
	return false
}

// compactKey is a token as a map key, whatever its spacing.
func compactKey(token json.RawMessage) (string, bool) {
	if token == nil {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, token) != nil {
		return "", false
	}
	return b.String(), true
}
