package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// What a server side answers for a line that is not a valid message
// (JSON-RPC 2.0 §5.1): -32700 with a null id for a line that is not JSON,
// -32600 for JSON that is not a request, a notification or a response. A
// batch (a JSON array) is one of those: batches left MCP in 2025-06-18.
// Answering matters for the host's connection: a host that sent something
// malformed learns why at once instead of waiting on a request that will
// never be answered. A client side (the trunk towards an upstream) only logs
// such lines: answering a server that floods stdout with junk would only
// fill its stdin.

// invalidMessage says why a line is not a message, and what to answer.
type invalidMessage struct {
	id  json.RawMessage // the request's id when it has a usable one, else null
	err *Error
	// quiet: log it, never answer. A response without an id (the peer's
	// own complaint about something it could not read) is never answered:
	// two peers that answered each other's errors would never stop.
	quiet bool
	// response: a response with an id, never answered (quiet), whose call
	// fails with err.
	response bool
}

var nullID = json.RawMessage("null")

// checkEnvelope reports what is wrong with a decoded message, or nil when it
// is well formed.
func checkEnvelope(m *message) *invalidMessage {
	if len(m.ID) > 0 && !validID(m.ID) {
		return &invalidMessage{id: nullID, err: &Error{Code: CodeInvalidRequest,
			Message: "invalid request: id must be a string or a number"}}
	}
	if m.Method == "" && !hasID(m.ID) && (m.Error != nil || len(m.Result) > 0) {
		return &invalidMessage{quiet: true, err: &Error{Code: CodeInvalidRequest,
			Message: "a response without an id"}}
	}
	if m.Method == "" && !hasID(m.ID) {
		return &invalidMessage{id: nullID, err: &Error{Code: CodeInvalidRequest,
			Message: "invalid request: neither a request, a notification nor a response (no method and no id)"}}
	}
	if noMethod(m) {
		// Answered with its id, so the peer does not wait for it forever.
		return &invalidMessage{id: m.ID, err: noMethodError()}
	}
	if m.JSONRPC != Version {
		if m.Method == "" { // checked above: a response with an id
			err := versionError(m.JSONRPC)
			err.Code, err.Message = CodeInternalError, "the peer's response is not JSON-RPC 2.0"+strings.TrimPrefix(err.Message, "invalid request")
			return &invalidMessage{quiet: true, response: true, err: err}
		}
		id := nullID
		if hasID(m.ID) {
			id = m.ID
		}
		return &invalidMessage{id: id, err: versionError(m.JSONRPC)}
	}
	return nil
}

// Version is the one version of JSON-RPC a message may say it speaks.
const Version = "2.0"

// versionError is the -32600 for a message whose jsonrpc member is got
// rather than "2.0" (got is "" when it is missing).
func versionError(got string) *Error {
	if got == "" {
		return &Error{Code: CodeInvalidRequest, Message: `invalid request: "jsonrpc" must be "2.0", and is missing`}
	}
	return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf(`invalid request: "jsonrpc" must be "2.0", not %.40q`, got)}
}

// noMethod reports a message with an id and neither a result nor an
// error, so no response, and no method: a request whose method is "",
// null or missing.
func noMethod(m *message) bool {
	return m.Method == "" && hasID(m.ID) && m.Error == nil && len(m.Result) == 0
}

func noMethodError() *Error {
	return &Error{Code: CodeInvalidRequest, Message: "invalid request: method must be a non-empty string"}
}

// classifyUndecodable explains a line decodeMessage refused with err.
func classifyUndecodable(line []byte, err error) *invalidMessage {
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return &invalidMessage{id: nullID, err: &Error{Code: CodeParseError,
			Message: "parse error: the line is not valid JSON"}}
	}
	switch trimmed[0] {
	case '[':
		return &invalidMessage{id: nullID, err: &Error{Code: CodeInvalidRequest,
			Message: "invalid request: JSON-RPC batches are not part of MCP since 2025-06-18; send one message per line"}}
	case '{':
	default:
		return &invalidMessage{id: nullID, err: &Error{Code: CodeInvalidRequest,
			Message: "invalid request: a message must be a JSON object"}}
	}
	// An object whose members have the wrong types: name the member, and
	// answer with the id when it is a usable one.
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	id := nullID
	if json.Unmarshal(trimmed, &probe) == nil && len(probe.ID) > 0 && validID(probe.ID) && hasID(probe.ID) {
		id = probe.ID
	}
	msg := "invalid request"
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		msg = fmt.Sprintf("invalid request: %q must be %s", typeErr.Field, expectedType(typeErr.Field))
	}
	return &invalidMessage{id: id, err: &Error{Code: CodeInvalidRequest, Message: msg}}
}

// expectedType is what the envelope member field must be.
func expectedType(field string) string {
	switch field {
	case "method", "jsonrpc":
		return "a string"
	case "error":
		return "an object with a code and a message"
	}
	return "of another type"
}

// validID reports whether a present id is one JSON-RPC allows here: a string,
// a number, or null (which the trunk treats as absent).
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return bytes.Equal(id, nullID)
}

// rejectInvalid handles a line that is not a valid message: logged (rate
// limited, see reportGarbage) and, on a Conn that answers invalid input,
// answered.
func (c *Conn) rejectInvalid(line []byte, inv *invalidMessage) {
	c.reportGarbage(line, inv.err)
	if !c.answerInvalid || inv.quiet {
		return
	}
	if err := c.writeResponse(inv.id, nil, inv.err); err != nil {
		c.logger.Debug("answering an invalid message failed", "error", err)
	}
}
