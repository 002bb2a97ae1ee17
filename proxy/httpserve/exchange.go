package httpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// post takes one JSON-RPC message: an initialize opens a session, a
// message with Mcp-Session-Id goes to its session, and a request with
// neither is a stateless one (stateless.go).
func (h *Handler) post(w http.ResponseWriter, r *http.Request, a admitted) {
	line, env, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	if id := r.Header.Get(protocol.HeaderSessionID); id != "" {
		s := h.sessionOf(r, a)
		if s == nil {
			rpcError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session: initialize again")
			return
		}
		h.toSession(w, r, a, s, env, line)
		return
	}
	if env.Method == "initialize" && !protocol.IsStateless(r.Header.Get(protocol.HeaderProtocolVersion)) &&
		!protocol.IsStateless(rawjson.MetaString(env.Params, protocol.MetaProtocolVersion)) {
		s, refused := h.addSession(clientAddr(r), a.caller)
		if s == nil {
			rpcError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, refused)
			return
		}
		h.logger.Info("session opened", "session", s.id)
		w.Header().Set(protocol.HeaderSessionID, s.id)
		h.toSession(w, r, a, s, env, line)
		return
	}
	if !env.IsRequest() {
		// A notification or response without a session: the stateless
		// revision's (its cancellation is the client closing the
		// request's stream), and there is nobody to tell.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if env.Method == protocol.MethodDiscover || env.Method == "initialize" || protocol.IsStateless(rawjson.MetaString(env.Params, protocol.MetaProtocolVersion)) {
		h.stateless(w, r, a, env, line)
		return
	}
	rpcError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "no "+protocol.HeaderSessionID+" header: send initialize first (or, at "+protocol.Stateless+", the revision's _meta)")
}

// readMessage reads the body, bounded in size and time, as one JSON-RPC
// message, compacted to one line for the session's connection.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request) ([]byte, jsonrpc.Envelope, bool) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout)) // not with httptest's recorder
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err == nil { // else what is left of the body must not be waited for (guard)
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		rpcError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is larger than %d bytes, the most this trunk reads", h.opts.MaxBodyBytes))
		return nil, jsonrpc.Envelope{}, false
	case errors.As(err, &netErr) && netErr.Timeout():
		w.Header().Set("Connection", "close")
		rpcError(w, http.StatusRequestTimeout, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the body did not arrive within %s (trunk.http.bodyTimeout)", h.opts.BodyTimeout))
		return nil, jsonrpc.Envelope{}, false
	case err != nil:
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "reading the body failed")
		return nil, jsonrpc.Envelope{}, false
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "batches are not supported: send one message per request")
		return nil, jsonrpc.Envelope{}, false
	}
	var line bytes.Buffer
	if err := json.Compact(&line, body); err != nil {
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "the body is not JSON: "+err.Error())
		return nil, jsonrpc.Envelope{}, false
	}
	env, err := jsonrpc.PeekEnvelope(line.Bytes())
	if err != nil || (env.Method == "" && len(env.ID) == 0) {
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "the body is not a JSON-RPC message")
		return nil, jsonrpc.Envelope{}, false
	}
	if msg := invalidRequest(line.Bytes()); msg != "" {
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, msg)
		return nil, jsonrpc.Envelope{}, false
	}
	return line.Bytes(), env, true
}

// invalidRequest says what makes a message an invalid one (JSON-RPC 2.0,
// section 4): a jsonrpc member that is not "2.0", or, with a method member,
// a method that is not a non-empty string, an id that is neither a string
// nor a number. "" when there is nothing wrong.
func invalidRequest(msg []byte) string {
	if v, err := rawjson.StringField(msg, "jsonrpc"); err != nil || v != jsonrpc.Version {
		return `the message's "jsonrpc" must be "2.0"`
	}
	start, _, found, err := rawjson.FieldSpan(msg, "method")
	if err != nil || !found {
		return ""
	}
	if method, err := rawjson.StringField(msg, "method"); msg[start] != '"' || err != nil || method == "" {
		return "the request's method must be a non-empty string"
	}
	start, end, found, err := rawjson.FieldSpan(msg, "id")
	if err != nil || !found {
		return ""
	}
	if c := msg[start]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return "the request's id must be a string or a number, not " + string(msg[start:end])
	}
	return ""
}

// clientAddr is the client's address without its port, for the limits
// per client.
func clientAddr(r *http.Request) string { return hostPart(r.RemoteAddr) }

// toSession passes a message to a session (a: what its sender was
// admitted as): a request's answer comes back on this exchange; a
// notification or a response gets 202.
func (h *Handler) toSession(w http.ResponseWriter, r *http.Request, a admitted, s *session, env jsonrpc.Envelope, line []byte) {
	s.touch()
	s.noteToken(a)
	if v := r.Header.Get(protocol.HeaderProtocolVersion); v != "" && !protocol.Known(v) {
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, fmt.Sprintf("unsupported %s %q", protocol.HeaderProtocolVersion, v))
		return
	}
	if !env.IsRequest() {
		if env.Method == "notifications/initialized" {
			s.finished.Store(true)
		}
		if env.Method == "notifications/cancelled" {
			if start, end, found, err := rawjson.FieldSpan(env.Params, "requestId"); err == nil && found {
				s.router.cancel(env.Params[start:end])
			}
		}
		if err := s.deliver(line); err != nil {
			rpcError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "the session has ended: initialize again")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if env.Method != "initialize" {
		s.used.Store(true)
	}
	if s.router.inFlight() >= h.opts.MaxInFlight {
		rpcError(w, http.StatusTooManyRequests, jsonrpc.CodeInternalError, fmt.Sprintf("too many requests in flight: a session may have %d waiting at once", h.opts.MaxInFlight))
		return
	}
	st := s.newStream()
	st.listen = env.Method == protocol.MethodListen
	if !s.router.expect(env.ID, progressTokenOf(env.Params), st) {
		rpcError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "a request with this id is already in flight in the session")
		return
	}
	if err := h.answer(w, r, s, st, line); err != nil {
		rpcError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "the session has ended: initialize again")
	}
}

// answer runs a POSTed request on this goroutine, the exchange's, and
// replies with what its session sends for it (st). What comes before the
// answer (progress, log messages, a server's request, a listen's
// notifications) must reach the client while the request runs: the first
// such message starts the reply on a goroutine of its own
// (stream.replyEarly), which this one waits for once the request is
// answered (stream.takeReply). A request answered with nothing before it is replied to here,
// with no goroutine but the exchange's and no hand-off. It returns an
// error, having written nothing, when the session has ended.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, s *session, st *stream, line []byte) error {
	select {
	case <-s.done:
		return errSessionClosed
	default:
	}
	st.replyEarly(earlyReply{h: h, w: w, r: r, s: s})
	err := s.server.Answer(h.life, line)
	if !st.takeReply() {
		return nil // written by the early reply
	}
	if err != nil {
		return err
	}
	h.reply(w, r, s, st)
	return nil
}

// reply answers a POSTed request from its stream: as one JSON body when
// the response comes before anything else (and the client takes JSON), else
// as server-sent events. A client that goes away leaves the stream to be
// resumed with Last-Event-ID.
func (h *Handler) reply(w http.ResponseWriter, r *http.Request, s *session, st *stream) {
	accept := r.Header.Get("Accept")
	takesJSON := accept == "" || acceptsType(accept, "application/json")
	takesSSE := acceptsType(accept, "text/event-stream")
	for {
		msg, only, decided := st.onlyResponse()
		if decided {
			if only && (takesJSON || !takesSSE) {
				writeResponse(w, s, msg)
				s.router.forget(st)
				return
			}
			break
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		}
	}
	if !takesSSE {
		h.replyJSONOnly(w, r, s, st)
		return
	}
	s.streams.Add(1)
	defer s.streams.Add(-1)
	if err := st.writeSSE(r.Context(), w, 0, s.done, false, primes(r)); err == nil {
		s.router.forget(st)
	}
}

// primes reports whether a POST's event stream starts with a priming
// event: from 2025-11-25 on, the revision that defines it (SEP-1699); an
// older client may take its empty data for a malformed message.
func primes(r *http.Request) bool {
	return r.Header.Get(protocol.HeaderProtocolVersion) >= protocol.Revision2025
}

// replyJSONOnly answers a client that takes no event stream: what came
// before the response is dropped, the response is the body. A request the
// host cancelled gets 204: no answer, as MCP says.
func (h *Handler) replyJSONOnly(w http.ResponseWriter, r *http.Request, s *session, st *stream) {
	for {
		response, final, ended, cancelled := st.outcome()
		switch {
		case final && response != nil:
			writeResponse(w, s, response)
			s.router.forget(st)
			return
		case cancelled:
			w.WriteHeader(http.StatusNoContent)
			s.router.forget(st)
			return
		case ended || final:
			rpcError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "the session ended before the answer")
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		}
	}
}

// writeResponse writes a request's response as the JSON body, with the
// HTTP status the stateless revision gives its error (errorStatus). The
// answer of a request a limit refused carries Retry-After, and when it is
// a JSON-RPC error, 429; a refused tools/call's tool error keeps 200, so
// that the host hands it to the model rather than failing the exchange.
func writeResponse(w http.ResponseWriter, s *session, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	if s.perRequest {
		status := errorStatus(msg)
		if secs, isError, ok := limits.RetryAfterOf(msg); ok {
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			if isError {
				status = http.StatusTooManyRequests
			}
		}
		if status != 0 {
			w.WriteHeader(status)
		}
	}
	_, _ = w.Write(append(msg, '\n'))
}

// get opens the session's standalone stream, or resumes a stream from
// the event a Last-Event-ID names.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, a admitted) {
	id := r.Header.Get(protocol.HeaderSessionID)
	if id == "" {
		http.Error(w, "no standalone stream without a session: the stateless revision has none", http.StatusMethodNotAllowed)
		return
	}
	s := h.sessionOf(r, a)
	if s == nil {
		rpcError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session: initialize again")
		return
	}
	if !acceptsType(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "the stream is text/event-stream: say so in Accept", http.StatusNotAcceptable)
		return
	}
	s.touch()
	s.used.Store(true)
	st, from, resumed := (*stream)(nil), 0, false
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		if sid, n, ok := parseEventID(last); ok {
			st, from = s.router.find(sid), n
			resumed = st != nil
		}
	}
	if st == nil {
		st = s.router.openGet()
		from = st.position()
	}
	s.streams.Add(1)
	defer s.streams.Add(-1)
	err := st.writeSSE(r.Context(), w, from, s.done, resumed, false)
	switch {
	case errors.Is(err, errStreamBusy):
		http.Error(w, err.Error(), http.StatusConflict)
	case err == nil && st.id != "g":
		s.router.forget(st)
	}
}

// delete ends a session at the client's request.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, a admitted) {
	s := h.sessionOf(r, a)
	if s == nil {
		rpcError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session")
		return
	}
	h.logger.Info("session closed by the client", "session", s.id)
	h.endSession(s, "the session was closed by its client")
	w.WriteHeader(http.StatusNoContent)
}

// acceptsType reports whether an Accept header admits a media type.
func acceptsType(accept, mediaType string) bool {
	for _, part := range strings.Split(accept, ",") {
		t, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		t = strings.TrimSpace(t)
		if t == mediaType || t == "*/*" || (strings.HasSuffix(t, "/*") && strings.HasPrefix(mediaType, strings.TrimSuffix(t, "*"))) {
			return true
		}
	}
	return false
}

// progressTokenOf is params._meta.progressToken, or nil.
func progressTokenOf(params json.RawMessage) json.RawMessage {
	return rawjson.MetaValue(params, "progressToken")
}

// rpcError answers with an HTTP status and a JSON-RPC error naming why.
func rpcError(w http.ResponseWriter, status, code int, message string) {
	rpcErrorID(w, status, nil, code, message)
}

// rpcErrorID is rpcError for the request with this id (null when nil).
func rpcErrorID(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(errorResponse(id, code, message), '\n'))
}

// errorResponse is a JSON-RPC error response (id null when nil), its
// message clipped as a Conn clips one (it may echo what the client sent).
func errorResponse(id json.RawMessage, code int, message string) []byte {
	message = jsonrpc.ClipMessage(message)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, message}})
	return body
}
