package tracing

import (
	"bytes"
	"encoding/json"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// The MCP convention for trace context (the OpenTelemetry semantic
// conventions for MCP, and SEP-414): the W3C traceparent and tracestate
// go in the request's params._meta under those very keys, which works
// over stdio, where there are no headers.

const (
	keyTraceparent = "traceparent"
	keyTracestate  = "tracestate"
)

var traceparentKey = []byte(`"` + keyTraceparent + `"`)

// metaReader is a propagation.TextMapCarrier over a request's
// params._meta, for Extract.
type metaReader struct{ params json.RawMessage }

func (m metaReader) Get(key string) string {
	if key != keyTraceparent && key != keyTracestate {
		return ""
	}
	if !bytes.Contains(m.params, traceparentKey) {
		return "" // the usual case, without decoding _meta
	}
	return rawjson.MetaString(m.params, key)
}

func (metaReader) Set(string, string) {}

func (metaReader) Keys() []string { return []string{keyTraceparent, keyTracestate} }

// metaWriter collects what Inject writes, as the _meta values an
// outgoing.Observer returns.
type metaWriter map[string]json.RawMessage

func (m metaWriter) Get(string) string { return "" }

func (m metaWriter) Set(key, value string) {
	b, err := json.Marshal(value)
	if err == nil {
		m[key] = b
	}
}

func (m metaWriter) Keys() []string { return nil }
