package remote

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// The W3C trace context a request carries in params._meta (traceparent,
// tracestate: the MCP convention, which works on every transport) also
// goes in the HTTP headers of its POST, where an HTTP server's own
// instrumentation (which knows nothing of MCP) looks for it. It is taken
// from the very body being sent, so both always agree.

var traceparentKey = []byte(`"traceparent"`)

// setTraceHeaders sets traceparent and tracestate on req from body's
// params._meta, when it has them.
func setTraceHeaders(req *http.Request, body []byte) {
	if !bytes.Contains(body, traceparentKey) {
		return // the usual case: no tracing, no cost beyond this scan
	}
	var msg struct {
		Params struct {
			Meta struct {
				Traceparent string `json:"traceparent"`
				Tracestate  string `json:"tracestate"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || !headerSafe(msg.Params.Meta.Traceparent) {
		return
	}
	req.Header.Set("traceparent", msg.Params.Meta.Traceparent)
	if headerSafe(msg.Params.Meta.Tracestate) {
		req.Header.Set("tracestate", msg.Params.Meta.Tracestate)
	}
}

// headerSafe reports whether v can go in a header as it is: a value the
// HTTP client would refuse (a control character) must not fail the
// request it rides on, whoever sent it.
func headerSafe(v string) bool {
	if v == "" || len(v) > 1024 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}
