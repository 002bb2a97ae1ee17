package jsonrpc

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/jsonscan"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// SetMaxReadBytes sets the longest line the Conn reads, newline included
// (0: no limit); setting names the setting behind it in messages. A longer
// line is never held whole (see lines.go): it is answered with -32600 on a
// Conn that answers invalid input, fails the Call it answers when its id
// says which, and is otherwise logged. It may be called at any time, for
// the lines read after the one being read.
func (c *Conn) SetMaxReadBytes(n int, setting string) {
	c.readLimit.Store(&messageLimit{bytes: n, setting: setting})
}

// ResyncBytes is the resync bound a Conn to a server should use with read
// limit limit (Options.ResyncBytes): four times the limit, and at least
// 64 MiB, which the trunk reads and discards in well under a second.
func ResyncBytes(limit int) int64 {
	return max(4*int64(limit), 64<<20)
}

// overlongLine handles a line over the read limit l. It returns the
// error to end the Conn with when the line never ended.
func (c *Conn) overlongLine(over *overlong, l *messageLimit) error {
	e := &OverlongLineError{Size: over.size, Limit: l.bytes, Setting: l.setting, Unending: over.unending}
	info := edgeEnvelope(over.head, over.tail)
	c.logger.Warn("discarding a message over the size limit", "bytes", over.size, "limit", l.bytes,
		"id", logkey.Clip(string(info.id)), "method", logkey.Clip(info.method), "unending", over.unending)
	switch {
	case info.method == "" && hasID(info.id) && c.failPending(info.id, e):
	case c.answerInvalid && !info.response:
		id := info.id
		if !hasID(id) || !validID(id) {
			id = nullID
		}
		if err := c.writeResponse(id, nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + e.Error()}); err != nil {
			c.logger.Debug("answering an over-long message failed", "error", err)
		}
	}
	if over.unending {
		return e
	}
	return nil
}

// failPending ends the Call waiting for id with err; false when none is.
func (c *Conn) failPending(id json.RawMessage, err error) bool {
	n, perr := strconv.ParseInt(string(bytes.Trim(id, `"`)), 10, 64)
	if perr != nil {
		return false
	}
	c.mu.Lock()
	ch, ok := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	if ok {
		ch <- response{fail: err}
	}
	return ok
}

// edgeInfo is what the ends of an over-long line tell of its envelope.
type edgeInfo struct {
	id       json.RawMessage
	method   string
	response bool // a result or an error member was seen
}

// edgeEnvelope reads the top-level members at the start of a line until
// the first one cut off, and failing an id there, the id that ends it
// (the TypeScript SDK writes {"result":…,"jsonrpc":"2.0","id":1}).
func edgeEnvelope(head, tail []byte) edgeInfo {
	var info edgeInfo
	i := jsonscan.SkipSpace(head, 0)
	if i < len(head) && head[i] == '{' {
		i = jsonscan.SkipSpace(head, i+1)
		for i < len(head) && head[i] == '"' {
			end, _ := jsonscan.ScanString(head, i)
			if end < 0 {
				break
			}
			key := string(head[i+1 : end-1])
			if i = jsonscan.SkipSpace(head, end); i >= len(head) || head[i] != ':' {
				break
			}
			i = jsonscan.SkipSpace(head, i+1)
			switch key {
			case "result", "error":
				info.response = true
			}
			vend := jsonscan.SkipValue(head, i)
			if vend < 0 {
				break
			}
			switch key {
			case "id":
				info.id = append(json.RawMessage(nil), head[i:vend]...)
			case "method":
				info.method, _ = strconv.Unquote(string(head[i:vend]))
			}
			if i = jsonscan.SkipSpace(head, vend); i >= len(head) || head[i] != ',' {
				break
			}
			i = jsonscan.SkipSpace(head, i+1)
		}
	}
	if info.id == nil {
		if m := trailingID().FindSubmatch(tail); m != nil {
			info.id = append(json.RawMessage(nil), m[1]...)
		}
	}
	return info
}

// trailingID matches an id that is the last member of a line's object: a
// nested object's last member would be followed by two braces. Compiled
// when an over-long line first needs it, not at every start.
var trailingID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[,{]\s*"id"\s*:\s*(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*")\s*\}\s*$`)
})
