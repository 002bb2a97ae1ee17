// Package jsonrpc is the line-delimited JSON-RPC 2.0 connection that carries MCP
// in both directions: to every stdio upstream, and to the host on mcptrunk's own
// stdin/stdout.
//
// It exists so that results, params, errors and notifications travel as raw JSON:
// the trunk parses the envelope of each message once and never decodes or
// re-encodes what it does not need to look at. That is what keeps unknown
// fields, content types, error codes and _meta intact, and what keeps the
// per-message cost low.
//
//	conn := jsonrpc.NewConn(stdout, stdin, handler, nil)
//	go conn.Serve()
//	result, err := conn.Call(ctx, "tools/list", nil)
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Standard JSON-RPC error codes, and the codes MCP uses on top of them.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeUnavailable is answered when the server that owns a request is not
	// connected (exited, failed to start, closed). It is in the range JSON-RPC
	// reserves for implementation-defined server errors.
	CodeUnavailable = -32000
	// CodeRequestCancelled is answered to a request whose caller cancelled it.
	CodeRequestCancelled = -32800
)

// Error is a JSON-RPC error object. Data is kept raw so an upstream's error
// data reaches the host exactly as it was sent.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`

	peer bool // the answer of the peer to a Call, not made on this side
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// Errorf builds an Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err as a JSON-RPC error: an *Error found in its chain is
// returned as is (so an upstream's code and data pass through); anything else
// becomes an internal error carrying err's text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// FromPeer reports whether err is, or wraps, an *Error that the peer sent
// in answer to a Call, rather than one made on this side (with Errorf,
// AsError or a literal). A proxy that passes a peer's errors on as they
// came can so tell them from its own refusals, which may carry the same
// code.
func FromPeer(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.peer
}

// ErrClosed is returned by calls on a connection whose peer has gone away.
var ErrClosed = errors.New("connection closed")

// message is the envelope of any JSON-RPC message. Only the envelope is
// decoded; params, result and error data stay raw.
type message struct {
	// JSONRPC is the version the message says it speaks: "2.0", or it is
	// not a message this side takes (checkEnvelope).
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// decodeMessage parses one line's envelope, as json.Unmarshal into a
// message does. scanMessage answers for nearly every line, in one pass and
// without copying; what it declines goes to encoding/json. The members
// returned may share line's memory: line must not be modified or reused.
func decodeMessage(line []byte) (message, error) {
	if m, ok := scanMessage(line); ok {
		return m, nil
	}
	var m message
	err := json.Unmarshal(line, &m)
	return m, err
}

func (m *message) isRequest() bool      { return m.Method != "" && hasID(m.ID) }
func (m *message) isNotification() bool { return m.Method != "" && !hasID(m.ID) }

func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

var (
	jsonrpcHead = []byte(`{"jsonrpc":"2.0"`)
	nullResult  = json.RawMessage(`{}`)
)

// frameEnd closes every message and its line.
var frameEnd = []byte("}\n")

// appendRequest appends a request (id != nil) or a notification (id == nil).
func appendRequest(b []byte, id json.RawMessage, method string, params json.RawMessage) []byte {
	b = appendRequestHead(b, id, method, len(params) > 0)
	if len(params) > 0 {
		b = appendRaw(b, params)
	}
	return append(b, frameEnd...)
}

// appendRequestHead appends a request or notification up to where its
// params go (withParams) or its closing brace.
func appendRequestHead(b []byte, id json.RawMessage, method string, withParams bool) []byte {
	b = append(b, jsonrpcHead...)
	if id != nil {
		b = append(b, `,"id":`...)
		b = append(b, id...)
	}
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if withParams {
		b = append(b, `,"params":`...)
	}
	return b
}

// appendResultHead appends a response up to where its result goes.
func appendResultHead(b []byte, id json.RawMessage) []byte {
	b = append(b, jsonrpcHead...)
	b = append(b, `,"id":`...)
	b = append(b, id...)
	return append(b, `,"result":`...)
}

// largeRaw reports whether raw is better written from where it is than
// copied into a frame: large, and single-line, so that appendRaw would copy
// it unchanged.
func largeRaw(raw json.RawMessage) bool {
	return len(raw) >= largePayload && bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0
}

// appendResponse appends a result or, when rpcErr is set, an error response.
func appendResponse(b []byte, id, result json.RawMessage, rpcErr *Error) ([]byte, error) {
	if rpcErr == nil {
		if len(result) == 0 {
			result = nullResult
		}
		b = appendResultHead(b, id)
		b = appendRaw(b, result)
		return append(b, frameEnd...), nil
	}
	if len(rpcErr.Message) > MaxErrorMessage {
		rpcErr = &Error{Code: rpcErr.Code, Message: ClipMessage(rpcErr.Message), Data: rpcErr.Data}
	}
	enc, err := marshalError(rpcErr)
	if err != nil {
		// Data is not valid JSON, so it cannot have come from a decoded
		// message. Answer without it rather than send nothing and leave
		// the caller waiting.
		enc, err = marshalError(&Error{Code: rpcErr.Code, Message: rpcErr.Message})
	}
	if err != nil {
		return nil, fmt.Errorf("encoding error response: %w", err)
	}
	b = append(b, jsonrpcHead...)
	b = append(b, `,"id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, enc...)
	return append(b, frameEnd...), nil
}

// MaxErrorMessage bounds the message of an error response a Conn writes,
// in bytes. A message is for a person to read; one that echoes what the
// peer sent (a method or a tool name of megabytes) must not send it all
// back. Past it the message is clipped, and says how much was left out;
// the error's code and data are kept as they are.
const MaxErrorMessage = 2048

// ClipMessage returns s, an error's message, cut to MaxErrorMessage bytes
// at a character boundary and saying how much it left out when it is
// longer: for an error answered by other means than a Conn (an HTTP body).
func ClipMessage(s string) string {
	if len(s) <= MaxErrorMessage {
		return s
	}
	const keep = MaxErrorMessage - 64 // room for the note
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes clipped)", s[:cut], len(s)-cut)
}

// marshalError encodes e without HTML escaping: json.Marshal would rewrite
// <, > and & inside Data as \u003c, \u003e and \u0026, and Data must reach
// the peer as it was sent. (Data is still compacted onto one line.)
func marshalError(e *Error) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendString appends s as a JSON string. Method names are plain ASCII in
// practice; anything else goes through encoding/json to stay valid JSON.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendRaw appends a raw JSON value. The stream is line-delimited, so a value
// that arrived pretty-printed (possible over HTTP) is compacted first; the
// common single-line value is copied as is.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		// Not valid JSON: it cannot have come from a decoded message. Keep the
		// stream framed rather than corrupt it.
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}
