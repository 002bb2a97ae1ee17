package metrics

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/otlp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// OTLPConfigured says whether the standard OpenTelemetry environment asks
// for metrics over OTLP: an endpoint for all signals or for metrics, unless
// OTEL_METRICS_EXPORTER names no otlp exporter (say "none") or
// OTEL_SDK_DISABLED is true. The same variables that turn on traces turn
// on metrics, as every OpenTelemetry SDK reads them.
func OTLPConfigured(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if e := strings.TrimSpace(getenv("OTEL_METRICS_EXPORTER")); e != "" && !strings.Contains(e, "otlp") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// newOTLP is the OTLP exporter the standard environment configures
// (otlp.ConfigFromEnv: http/protobuf by default, or grpc; headers,
// timeout, compression, TLS, and their _METRICS_ forms), with the
// temporality OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE asks for
// (cumulative by default); the periodic reader takes
// OTEL_METRIC_EXPORT_INTERVAL.
func newOTLP(_ context.Context, getenv func(string) string) (sdkmetric.Exporter, error) {
	cfg, err := otlp.ConfigFromEnv(otlp.Metrics, getenv)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	e := &otlpExporter{client: otlp.NewClient(cfg), temporality: sdkmetric.DefaultTemporalitySelector}
	switch p := strings.ToLower(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"))); p {
	case "", "cumulative":
	case "delta":
		e.temporality = deltaTemporality
	case "lowmemory":
		e.temporality = lowMemoryTemporality
	default:
		return nil, fmt.Errorf("metrics: OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE %q (cumulative, delta or lowmemory)", p)
	}
	return e, nil
}

// deltaTemporality is the spec's "delta" preference: delta for counters
// and histograms, cumulative for up-down counters.
func deltaTemporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	switch k {
	case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
		return metricdata.CumulativeTemporality
	}
	return metricdata.DeltaTemporality
}

// lowMemoryTemporality is "lowmemory": delta only for synchronous
// counters and histograms.
func lowMemoryTemporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	switch k {
	case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
		return metricdata.DeltaTemporality
	}
	return metricdata.CumulativeTemporality
}

// otlpExporter sends metric data to a collector (internal/otlp).
type otlpExporter struct {
	client      *otlp.Client
	temporality sdkmetric.TemporalitySelector
}

func (e *otlpExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

func (e *otlpExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *otlpExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.client.Send(ctx, encodeMetrics(rm))
}

func (e *otlpExporter) ForceFlush(context.Context) error { return nil }

func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.Close()
	return nil
}

// encodeMetrics is the ExportMetricsServiceRequest of rm.
func encodeMetrics(rm *metricdata.ResourceMetrics) []byte {
	var e otlp.Encoder
	e.Message(1, func(e *otlp.Encoder) { // ResourceMetrics
		e.Resource(1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			e.Message(2, func(e *otlp.Encoder) { // ScopeMetrics
				e.Scope(1, sm.Scope)
				for _, m := range sm.Metrics {
					e.Message(2, func(e *otlp.Encoder) { encodeMetric(e, m) })
				}
				e.String(3, sm.Scope.SchemaURL)
			})
		}
		e.String(3, rm.Resource.SchemaURL())
	})
	return e.Bytes()
}

// encodeMetric writes the members of an opentelemetry.proto.metrics.v1.Metric.
func encodeMetric(e *otlp.Encoder, m metricdata.Metrics) {
	e.String(1, m.Name)
	e.String(2, m.Description)
	e.String(3, m.Unit)
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		e.Message(5, func(e *otlp.Encoder) { numberPoints(e, d.DataPoints) })
	case metricdata.Gauge[float64]:
		e.Message(5, func(e *otlp.Encoder) { numberPoints(e, d.DataPoints) })
	case metricdata.Sum[int64]:
		e.Message(7, func(e *otlp.Encoder) {
			numberPoints(e, d.DataPoints)
			e.Uint(2, temporality(d.Temporality))
			e.Bool(3, d.IsMonotonic)
		})
	case metricdata.Sum[float64]:
		e.Message(7, func(e *otlp.Encoder) {
			numberPoints(e, d.DataPoints)
			e.Uint(2, temporality(d.Temporality))
			e.Bool(3, d.IsMonotonic)
		})
	case metricdata.Histogram[int64]:
		e.Message(9, func(e *otlp.Encoder) {
			histogramPoints(e, d.DataPoints)
			e.Uint(2, temporality(d.Temporality))
		})
	case metricdata.Histogram[float64]:
		e.Message(9, func(e *otlp.Encoder) {
			histogramPoints(e, d.DataPoints)
			e.Uint(2, temporality(d.Temporality))
		})
	}
}

// temporality is OTLP's AggregationTemporality: DELTA 1, CUMULATIVE 2.
func temporality(t metricdata.Temporality) uint64 {
	if t == metricdata.DeltaTemporality {
		return 1
	}
	return 2
}

func numberPoints[N int64 | float64](e *otlp.Encoder, points []metricdata.DataPoint[N]) {
	for _, p := range points {
		e.Message(1, func(e *otlp.Encoder) { // NumberDataPoint
			e.Fixed64(2, uint64(p.StartTime.UnixNano()))
			e.Fixed64(3, uint64(p.Time.UnixNano()))
			switch v := any(p.Value).(type) {
			case int64:
				e.SFixed64(6, v)
			case float64:
				e.Double(4, v)
			}
			attrs(e, 7, p.Attributes)
		})
	}
}

func histogramPoints[N int64 | float64](e *otlp.Encoder, points []metricdata.HistogramDataPoint[N]) {
	for _, p := range points {
		e.Message(1, func(e *otlp.Encoder) { // HistogramDataPoint
			e.Fixed64(2, uint64(p.StartTime.UnixNano()))
			e.Fixed64(3, uint64(p.Time.UnixNano()))
			e.Fixed64(4, p.Count)
			e.Double(5, float64(p.Sum))
			e.PackedFixed64(6, p.BucketCounts)
			e.PackedDouble(7, p.Bounds)
			attrs(e, 9, p.Attributes)
			if v, ok := p.Min.Value(); ok {
				e.Double(11, float64(v))
			}
			if v, ok := p.Max.Value(); ok {
				e.Double(12, float64(v))
			}
		})
	}
}

func attrs(e *otlp.Encoder, field int, set attribute.Set) { e.KeyValues(field, set.ToSlice()) }
