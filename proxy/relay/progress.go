package relay

import (
	"bytes"
	"encoding/json"
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
	var key bytes.Buffer
	if json.Compact(&key, params[start:end]) != nil {
		return zero, nil, false
	}
	v, ok := p.owners.Load(key.String())
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
