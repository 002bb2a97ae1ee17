package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// A peer reads messages up to a size, and one over it can end its whole
// connection (the TypeScript SDK's stdio transport closes at 10 MiB). On a
// Conn with a message limit (SetMaxMessageBytes) nothing larger is written:
//
//   - a response becomes an error response saying how large the answer was;
//   - a request or a notification is not sent, and Call or Notify returns a
//     *TooLargeError, for the caller to report or log.
//
// Sizes are of the encoded line the peer reads: envelope, JSON escaping and
// the newline included.

// TooLargeError is a message that was not sent because it is over the
// connection's limit.
type TooLargeError struct {
	Size, Limit int
	Setting     string // the setting that sets the limit, for the message
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the message is %d bytes, more than the %d bytes the peer reads%s", e.Size, e.Limit, settingSuffix(e.Setting))
}

// messageLimit is a Conn's limit and the setting behind it, swapped whole.
type messageLimit struct {
	bytes   int
	setting string
}

// SetMaxMessageBytes sets the largest message the Conn writes (0: no limit);
// setting names the setting behind it in messages. It may be called at any
// time, for the messages written after it.
func (c *Conn) SetMaxMessageBytes(n int, setting string) {
	c.limit.Store(&messageLimit{bytes: n, setting: setting})
}

// tooLarge reports a message of size bytes that is over the limit.
func (c *Conn) tooLarge(size int) *TooLargeError {
	l := c.limit.Load()
	if l == nil || l.bytes <= 0 || size <= l.bytes {
		return nil
	}
	return &TooLargeError{Size: size, Limit: l.bytes, Setting: l.setting}
}

// oversizedAnswer is the error response sent instead of an answer that is
// over the limit: the peer learns what happened, and its connection lives.
func oversizedAnswer(e *TooLargeError) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf("the answer is %d bytes, more than the %d bytes this connection carries%s",
		e.Size, e.Limit, settingSuffix(e.Setting))}
}

func settingSuffix(setting string) string {
	if setting == "" {
		return ""
	}
	return " (" + setting + ")"
}

// NotificationLen is the length of the line that Notify(method, params)
// writes, newline included.
func NotificationLen(method string, params json.RawMessage) int {
	var b [64]byte
	return len(appendRequestHead(b[:0], nil, method, len(params) > 0)) + len(params) + len(frameEnd)
}

// CheckSize returns the *TooLargeError for a message of size bytes, or nil
// when the Conn would write it.
func (c *Conn) CheckSize(size int) error {
	if e := c.tooLarge(size); e != nil {
		return e
	}
	return nil
}
