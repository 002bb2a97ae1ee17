package metrics

import (
	"context"
	"errors"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/limits"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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

func (m *Metrics) instruments() error {
	var errs [7]error
	m.requests, errs[0] = m.meter.Int64Counter("mcptrunk.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Host requests answered, by server, method, item (tool or prompt) and outcome."))
	m.duration, errs[1] = m.meter.Float64Histogram("mcptrunk.request.duration", metric.WithUnit("s"),
		metric.WithDescription("How long host requests took to answer, by server and method."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	m.sizeIn, errs[2] = m.meter.Int64Counter("mcptrunk.request.params", metric.WithUnit("By"),
		metric.WithDescription("Bytes of params the host sent, by server and method."))
	m.sizeOut, errs[3] = m.meter.Int64Counter("mcptrunk.response.result", metric.WithUnit("By"),
		metric.WithDescription("Bytes of results sent to the host, by server and method."))
	m.inFlight, errs[4] = m.meter.Int64UpDownCounter("mcptrunk.requests.in_flight", metric.WithUnit("{request}"),
		metric.WithDescription("Host requests being answered now, by server and method."))
	errs[5] = m.statusInstruments()
	errs[6] = m.taskInstruments()
	return errors.Join(errs[:]...)
}

// labelKey is one combination of bounded label values.
type labelKey struct{ server, method, item string }

// labelSets are the attribute sets of one labelKey, made once: the set
// without the outcome (duration, bytes, in flight) and one per outcome.
type labelSets struct {
	base    metric.MeasurementOption
	outcome [len(outcomes)]metric.MeasurementOption
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
	s := &labelSets{base: metric.WithAttributeSet(attribute.NewSet(server, method))}
	for i, o := range outcomes {
		s.outcome[i] = metric.WithAttributeSet(attribute.NewSet(server, method, attribute.String("item", k.item), attribute.String("outcome", o)))
	}
	v, _ := m.sets.LoadOrStore(k, s)
	return v.(*labelSets)
}

// Begin counts a host request in flight; its end counts it by outcome,
// with its duration and sizes (the params and the result as the host sent
// and got them, without the JSON-RPC envelope).
func (m *Metrics) Begin(ctx context.Context, r observe.Request) (context.Context, func(observe.Outcome)) {
	s := m.labels(r)
	m.inFlight.Add(ctx, 1, s.base)
	return ctx, func(out observe.Outcome) {
		m.inFlight.Add(ctx, -1, s.base)
		m.requests.Add(ctx, 1, s.outcome[outcomeOf(ctx, r.Method, out)])
		m.duration.Record(ctx, out.Duration.Seconds(), s.base)
		m.sizeIn.Add(ctx, int64(len(r.Params)), s.base)
		m.sizeOut.Add(ctx, int64(len(out.Result)), s.base)
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
