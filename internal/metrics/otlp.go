package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/internal/otlp"
	"go.opentelemetry.io/otel/attribute"
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

// periodic sends the metrics to a collector over OTLP every interval,
// and once more when shut down.
type periodic struct {
	client   *otlp.Client
	logger   *slog.Logger
	collect  func() *metricdata.ResourceMetrics
	interval time.Duration
	timeout  time.Duration
	delta    *deltas // nil for cumulative temporality

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	mu       sync.Mutex // one export at a time, as deltas need
}

// newPeriodic starts the OTLP export the standard environment configures:
// where and how (otlp.ConfigFromEnv: http/protobuf by default, or grpc;
// headers, timeout, compression, TLS, and their _METRICS_ forms), how often
// (OTEL_METRIC_EXPORT_INTERVAL, default 60 s; OTEL_METRIC_EXPORT_TIMEOUT,
// 30 s) and with which temporality
// (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: cumulative, the
// default, delta or lowmemory).
func newPeriodic(getenv func(string) string, collect func() *metricdata.ResourceMetrics, logger *slog.Logger) (*periodic, error) {
	cfg, err := otlp.ConfigFromEnv(otlp.Metrics, getenv)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	p := &periodic{collect: collect, logger: logger, stop: make(chan struct{}), done: make(chan struct{})}
	if p.interval, err = envMillis(getenv, "OTEL_METRIC_EXPORT_INTERVAL", 60*time.Second); err != nil {
		return nil, err
	}
	if p.timeout, err = envMillis(getenv, "OTEL_METRIC_EXPORT_TIMEOUT", 30*time.Second); err != nil {
		return nil, err
	}
	switch pref := strings.ToLower(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"))); pref {
	case "", "cumulative":
	case "delta":
		p.delta = &deltas{observed: true}
	case "lowmemory":
		p.delta = &deltas{}
	default:
		return nil, fmt.Errorf("metrics: OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE %q (cumulative, delta or lowmemory)", pref)
	}
	p.client = otlp.NewClient(cfg)
	go p.run()
	return p, nil
}

// envMillis is a duration in milliseconds from the environment, def when
// unset.
func envMillis(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	ms, err := strconv.Atoi(v)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("metrics: %s: %q is not a number of milliseconds", name, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func (p *periodic) run() {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
			if err := p.export(ctx); err != nil {
				p.logger.Warn("metrics: export failed", logkey.Error, err)
			}
			cancel()
		}
	}
}

func (p *periodic) export(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	rm := p.collect()
	if p.delta != nil {
		p.delta.apply(rm)
	}
	return p.client.Send(ctx, encodeMetrics(rm))
}

// shutdown stops the periodic export and sends what was counted since the
// last; after the first, a call does nothing.
func (p *periodic) shutdown(ctx context.Context) error {
	first := false
	p.stopOnce.Do(func() { first = true; close(p.stop) })
	if !first {
		return nil
	}
	<-p.done
	defer p.client.Close()
	return p.export(ctx)
}

// deltas turns cumulative sums and histograms into deltas since the
// previous export: every one for the "delta" preference (observed
// included), the synchronous counters and histograms for "lowmemory". An
// up-down counter stays cumulative either way, as the spec says.
type deltas struct {
	observed bool
	last     map[deltaKey]lastPoint
}

type deltaKey struct {
	metric string
	attrs  attribute.Distinct
}

type lastPoint struct {
	at     time.Time
	value  int64
	count  uint64
	sum    float64
	counts []uint64
}

func (d *deltas) apply(rm *metricdata.ResourceMetrics) {
	if d.last == nil {
		d.last = map[deltaKey]lastPoint{}
	}
	for i := range rm.ScopeMetrics {
		for j, m := range rm.ScopeMetrics[i].Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !data.IsMonotonic || (!d.observed && d.isObserved(m.Name)) {
					continue
				}
				for k, p := range data.DataPoints {
					key := deltaKey{m.Name, p.Attributes.Equivalent()}
					prev, ok := d.last[key]
					d.last[key] = lastPoint{at: p.Time, value: p.Value}
					if ok {
						data.DataPoints[k].StartTime, data.DataPoints[k].Value = prev.at, p.Value-prev.value
					}
				}
				data.Temporality = metricdata.DeltaTemporality
				rm.ScopeMetrics[i].Metrics[j].Data = data
			case metricdata.Histogram[float64]:
				for k, p := range data.DataPoints {
					key := deltaKey{m.Name, p.Attributes.Equivalent()}
					prev, ok := d.last[key]
					d.last[key] = lastPoint{at: p.Time, count: p.Count, sum: p.Sum, counts: p.BucketCounts}
					if !ok {
						continue
					}
					q := &data.DataPoints[k]
					q.StartTime, q.Count, q.Sum = prev.at, p.Count-prev.count, p.Sum-prev.sum
					q.BucketCounts = make([]uint64, len(p.BucketCounts))
					for b := range q.BucketCounts {
						q.BucketCounts[b] = p.BucketCounts[b] - prev.counts[b]
					}
					// The extremes are of all time, not of the interval.
					q.Min, q.Max = metricdata.Extrema[float64]{}, metricdata.Extrema[float64]{}
				}
				data.Temporality = metricdata.DeltaTemporality
				rm.ScopeMetrics[i].Metrics[j].Data = data
			}
		}
	}
}

// observedCounters are the trunk's asynchronous counters, which the
// lowmemory preference keeps cumulative.
var observedCounters = map[string]bool{
	"mcptrunk.server.restarts": true, "mcptrunk.notifications.dropped": true,
	"mcptrunk.server.lazy_starts": true, "mcptrunk.server.idle_stops": true,
}

func (d *deltas) isObserved(name string) bool { return observedCounters[name] }

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
