package audit

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// The outcomes of a line.
const (
	// OutcomeOK is a result the host gets as a success.
	OutcomeOK = "ok"
	// OutcomeToolError is a tools/call result with isError true: the
	// server ran the tool and it failed (or the trunk replaced a result
	// too big for the host with one, which the model reads).
	OutcomeToolError = "tool_error"
	// OutcomeInputRequired is one round of a multi-round call at the
	// 2026-07-28 revision: the call is not over, the host retries it, and
	// the retry gets a line of its own.
	OutcomeInputRequired = "input_required"
	// OutcomeRefused is the trunk's own JSON-RPC error -32602 (invalid
	// params): the code it answers for a request it does not route to any
	// server (an unknown name or URI, one the policy does not export, one
	// pinning withholds, malformed params or requestState).
	OutcomeRefused = "refused"
	// OutcomeError is every other JSON-RPC error: the server's own (a
	// -32602 it answered itself too: observe.Outcome.Forwarded), a server
	// not running, a timeout, a cancellation.
	OutcomeError = "error"
	// OutcomeLimited is a request trunk.limits refused (internal/limits):
	// a JSON-RPC error of limits.Code, or a tool error carrying the
	// refusal; the error names the limit and when to retry.
	OutcomeLimited = "limited"
)

// maxErrorLen bounds the error message kept in a line: a server's error
// text is its own and can be long.
const maxErrorLen = 1024

// maxItemLen bounds what the host names in a line (the item it asked
// for, its client's name): a refused request's name is the host's own and
// can be as long as its body.
const maxItemLen = 1024

// line is one audit record. Its fields are in the order they appear.
type line struct {
	Time       string          `json:"time"`
	Session    string          `json:"session"`
	Subject    string          `json:"subject,omitempty"`
	Client     string          `json:"client,omitempty"`
	Revision   string          `json:"revision,omitempty"`
	Method     string          `json:"method"`
	Server     string          `json:"server,omitempty"`
	Item       string          `json:"item"`
	Task       string          `json:"task,omitempty"` // a task's lines: the server's id for it
	Run        string          `json:"run,omitempty"`  // a call a code-mode program made: the run's id
	DurationMs float64         `json:"durationMs"`
	Outcome    string          `json:"outcome"`
	Code       int             `json:"code,omitempty"`
	Error      string          `json:"error,omitempty"`
	BytesIn    int             `json:"bytesIn"`
	BytesOut   int             `json:"bytesOut"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
}

// line encodes the record of one request, newline included.
func (l *Log) line(start time.Time, r observe.Request, out observe.Outcome) []byte {
	rec := line{
		Time:       start.UTC().Format(time.RFC3339Nano),
		Session:    l.session(r),
		Subject:    r.Subject,
		Client:     logkey.ClipTo(r.Client, maxItemLen),
		Revision:   r.Revision,
		Method:     r.Method,
		Server:     r.Server,
		Item:       logkey.ClipTo(r.Item, maxItemLen),
		Run:        r.Run,
		DurationMs: float64(out.Duration.Microseconds()) / 1000,
		BytesIn:    len(r.Params),
		BytesOut:   len(out.Result),
	}
	rec.Outcome, rec.Code, rec.Error = outcome(r.Method, out)
	if l.opts.Arguments {
		rec.Arguments = arguments(r.Params)
	}
	return encode(rec)
}

// taskLine encodes one line of a task's life (tasks.go), newline included.
func (l *Log) taskLine(at time.Time, t observe.Task, outcome string, durationMs float64) []byte {
	return encode(line{Time: at.UTC().Format(time.RFC3339Nano), Session: l.session(t.Call), Subject: t.Call.Subject, Client: logkey.ClipTo(t.Call.Client, maxItemLen),
		Revision: t.Call.Revision, Method: MethodTask, Server: t.Server, Item: logkey.ClipTo(t.Call.Item, maxItemLen), Task: t.ID, DurationMs: durationMs, Outcome: outcome})
}

// encode writes rec as a JSON line.
func encode(rec line) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(rec) != nil {
		// Only the arguments could fail to encode (arguments builds
		// them with encoding/json): keep the line without them.
		buf.Reset()
		rec.Arguments = nil
		_ = enc.Encode(rec)
	}
	return buf.Bytes()
}

// session names the host session of a request in its line: the id of an
// HTTP session, the log's own name for the stdio host, and nothing for a
// stateless request over HTTP, which has no session.
func (l *Log) session(r observe.Request) string {
	if r.Session == "" && r.Transport != config.TransportHTTP {
		return l.opts.Session
	}
	return r.Session
}

// outcome classifies how a request ended (see the Outcome constants).
func outcome(method string, out observe.Outcome) (string, int, string) {
	if out.Err != nil {
		e := jsonrpc.AsError(out.Err)
		msg := logkey.ClipTo(e.Message, maxErrorLen)
		if e.Code == limits.Code && !out.Forwarded {
			return OutcomeLimited, e.Code, msg
		}
		if e.Code == jsonrpc.CodeInvalidParams && !out.Forwarded {
			return OutcomeRefused, e.Code, msg
		}
		return OutcomeError, e.Code, msg
	}
	if rt, _ := rawjson.StringField(out.Result, protocol.FieldResultType); rt == protocol.ResultTypeInputRequired {
		return OutcomeInputRequired, 0, ""
	}
	if method == "tools/call" && isError(out.Result) {
		if r, ok := limits.InResult(out.Result); ok {
			return OutcomeLimited, 0, r.Message()
		}
		return OutcomeToolError, 0, ""
	}
	return OutcomeOK, 0, ""
}

// isError reports whether a tool result says isError: true.
func isError(res json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(res, "isError")
	return err == nil && found && string(res[start:end]) == "true"
}
