package jsonrpc

import "encoding/json"

// Envelope is what a transport needs to know of a message to route it:
// its id (nil for a notification), its method ("" for a response) and its
// params. The members may share the line's memory.
type Envelope struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// IsResponse reports whether the message answers a request.
func (e Envelope) IsResponse() bool { return e.Method == "" && len(e.ID) > 0 }

// IsRequest reports whether the message is a request (it has an id and a
// method).
func (e Envelope) IsRequest() bool { return e.Method != "" && len(e.ID) > 0 }

// PeekEnvelope parses one message's envelope with the connection's own
// parser (one pass, no copy of params or result), for the HTTP downstream,
// which routes each message to the HTTP exchange it belongs to.
//
// A message with an id and neither a method, a result nor an error (a
// request whose method is "", null or missing) is not a response: it is
// an *Error with CodeInvalidRequest, to answer with the returned ID, as the
// Conn answers it.
func PeekEnvelope(line []byte) (Envelope, error) {
	m, err := decodeMessage(line)
	if err != nil {
		return Envelope{}, err
	}
	if noMethod(&m) {
		return Envelope{ID: m.ID}, noMethodError()
	}
	return Envelope{ID: m.ID, Method: m.Method, Params: m.Params}, nil
}
