package metrics

import (
	"context"
	"errors"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
)

// How a request ended: indexes into outcomes, the outcome label's values.
const (
	outcomeOK        = iota // a result
	outcomeToolError        // a tools/call result with isError: the tool ran and failed
	outcomeError            // a JSON-RPC error
	outcomeCancelled        // the host cancelled it (or went away)
	outcomeLimited          // trunk.limits refused it (internal/limits)
)

var outcomes = [...]string{"ok", "tool_error", "error", "cancelled", "limited"}

// itemMethods are the methods whose item (the exported tool or prompt
// name) is a label. A resource URI is not: a server may serve any number
// of them, so resources are counted by server only.
var itemMethods = map[string]bool{"tools/call": true, "prompts/get": true}

// Request-latency buckets in seconds: from a fast local call (under a
// millisecond) to the longest a tool is normally let run.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

func (m *Metrics) instruments() {
	r := &m.reg
	m.requests = r.newInstrument(kindCounter, "mcptrunk.requests", "{request}",
		"Host requests answered, by server, method, item (tool or prompt) and outcome.")
	m.duration = r.newInstrument(kindHistogram, "mcptrunk.request.duration", "s",
		"How long host requests took to answer, by server and method.", durationBuckets...)
	m.sizeIn = r.newInstrument(kindCounter, "mcptrunk.request.params", "By",
		"Bytes of params the host sent, by server and method.")
	m.sizeOut = r.newInstrument(kindCounter, "mcptrunk.response.result", "By",
		"Bytes of results sent to the host, by server and method.")
	m.inFlight = r.newInstrument(kindUpDown, "mcptrunk.requests.in_flight", "{request}",
		"Host requests being answered now, by server and method.")
	m.statusInstruments()
	m.taskInstruments()
}

// labelKey is one combination of bounded label values.
type labelKey struct{ server, method, item string }

// labelSets are the series of one labelKey, found once: those without
// the outcome (duration, bytes, in flight) and the request count's, one
// per outcome.
type labelSets struct {
	inFlight, sizeIn, sizeOut, duration *cell
	requests                            [len(outcomes)]*cell
}

func (m *Metrics) labels(r observe.Request) *labelSets {
	k := labelKey{server: m.servers.label(r.Server), method: m.methods.label(r.Method)}
	if itemMethods[r.Method] {
		k.item = m.items.label(r.Item)
	}
	if s, ok := m.sets.Load(k); ok {
		return s.(*labelSets)
	}
	server, method := attribute.String("server", k.server), attribute.String("method", k.method)
	base := attribute.NewSet(server, method)
	s := &labelSets{inFlight: m.inFlight.cell(base), sizeIn: m.sizeIn.cell(base), sizeOut: m.sizeOut.cell(base), duration: m.duration.cell(base)}
	for i, o := range outcomes {
		s.requests[i] = m.requests.cell(attribute.NewSet(server, method, attribute.String("item", k.item), attribute.String("outcome", o)))
	}
	v, _ := m.sets.LoadOrStore(k, s)
	return v.(*labelSets)
}

// Begin counts a host request in flight; its end counts it by outcome,
// with its duration and sizes (the params and the result as the host sent
// and got them, without the JSON-RPC envelope).
func (m *Metrics) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	s := m.labels(r)
	s.inFlight.add(1)
	return ctx, func(out observe.Outcome) {
		s.inFlight.add(-1)
		s.requests[outcomeOf(ctx, r.Method, out)].add(1)
		s.duration.record(m.duration.bounds, out.Duration.Seconds())
		s.sizeIn.add(int64(len(r.Params)))
		s.sizeOut.add(int64(len(out.Result)))
	}
}

// outcomeOf is the index in outcomes of how a request ended.
func outcomeOf(ctx context.Context, method string, out observe.Outcome) int {
	switch {
	case out.Err != nil && (ctx.Err() != nil || errors.Is(out.Err, context.Canceled)):
		return outcomeCancelled
	case out.Err != nil && !out.Forwarded && jsonrpc.AsError(out.Err).Code == limits.Code:
		return outcomeLimited
	case out.Err != nil:
		return outcomeError
	case method == "tools/call" && isToolError(out.Result):
		if _, limited := limits.InResult(out.Result); limited {
			return outcomeLimited
		}
		return outcomeToolError
	}
	return outcomeOK
}

// isToolError says whether a tools/call result has isError: true.
func isToolError(result []byte) bool {
	start, end, found, err := rawjson.FieldSpan(result, "isError")
	return err == nil && found && string(result[start:end]) == "true"
}
