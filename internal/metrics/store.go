package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// The trunk's instruments are few and fixed, so they are kept here rather
// than in an OpenTelemetry metrics SDK: a series is a cell found once per
// label combination (observer.go keeps them) and updated with an atomic
// add, and collecting reads every cell into the OpenTelemetry data model
// (metricdata), which the exposition and the OTLP encoder write out.

// instrumentKind is what an instrument counts, and so how it is reported.
type instrumentKind int

const (
	kindCounter    instrumentKind = iota // a monotonic sum
	kindUpDown                           // a sum that goes down too: a gauge to Prometheus
	kindHistogram                        // explicit buckets
	kindGauge                            // observed at collection
	kindObsCounter                       // a monotonic sum observed at collection
)

// instrument is one metric: its description and, for the synchronous
// kinds, its series.
type instrument struct {
	name, desc, unit string
	kind             instrumentKind
	bounds           []float64 // kindHistogram's upper bounds

	mu     sync.Mutex
	series map[attribute.Distinct]*cell
}

// cell is one series of a synchronous instrument. A cell is made before
// its first measurement (observer.go makes every outcome's at once) and
// reported only after it, as an SDK reports only the series measured.
type cell struct {
	attrs attribute.Set
	used  atomic.Bool
	n     atomic.Int64 // counters and up-down counters

	hmu    sync.Mutex // histograms
	counts []uint64
	sum    float64
	count  uint64
	min    float64
	max    float64
}

// overflow is the attribute set of the one series a synchronous
// instrument's measurements go to past cardinalityLimit, as the
// OpenTelemetry SDKs name it.
var overflow = attribute.NewSet(attribute.Bool("otel.metric.overflow", true))

// cell is the series of attrs, made on first use.
func (in *instrument) cell(attrs attribute.Set) *cell {
	key := attrs.Equivalent()
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.series[key]; ok {
		return c
	}
	if len(in.series) >= cardinalityLimit-1 {
		attrs, key = overflow, overflow.Equivalent()
		if c, ok := in.series[key]; ok {
			return c
		}
	}
	c := &cell{attrs: attrs}
	if in.kind == kindHistogram {
		c.counts = make([]uint64, len(in.bounds)+1)
	}
	if in.series == nil {
		in.series = map[attribute.Distinct]*cell{}
	}
	in.series[key] = c
	return c
}

// add counts n in a counter's or up-down counter's cell.
func (c *cell) add(n int64) {
	c.n.Add(n)
	c.use()
}

func (c *cell) use() {
	if !c.used.Load() {
		c.used.Store(true)
	}
}

// record counts v in a histogram's cell with these bounds.
func (c *cell) record(bounds []float64, v float64) {
	i := 0
	for i < len(bounds) && v > bounds[i] {
		i++
	}
	c.hmu.Lock()
	c.counts[i]++
	if c.count == 0 || v < c.min {
		c.min = v
	}
	if c.count == 0 || v > c.max {
		c.max = v
	}
	c.count++
	c.sum += v
	c.hmu.Unlock()
	c.use()
}

// registry is every instrument, and the observations a collection gathers
// for the asynchronous ones.
type registry struct {
	res         *resource.Resource
	start       time.Time
	instruments []*instrument

	callbackMu sync.Mutex
	callback   func(*observation) // WatchStatus's, nil before it
}

func (r *registry) newInstrument(kind instrumentKind, name, unit, desc string, bounds ...float64) *instrument {
	in := &instrument{name: name, desc: desc, unit: unit, kind: kind, bounds: bounds}
	r.instruments = append(r.instruments, in)
	return in
}

// observation gathers what a callback observes in one collection.
type observation struct {
	points map[*instrument][]metricdata.DataPoint[int64]
	now    time.Time
	start  time.Time
}

// observe records v for an asynchronous instrument.
func (o *observation) observe(in *instrument, v int64, attrs ...attribute.KeyValue) {
	o.points[in] = append(o.points[in], metricdata.DataPoint[int64]{
		Attributes: attribute.NewSet(attrs...), StartTime: o.start, Time: o.now, Value: v})
}

// collect reads every instrument now, in the order they were made.
func (r *registry) collect() *metricdata.ResourceMetrics {
	now := time.Now()
	obs := &observation{points: map[*instrument][]metricdata.DataPoint[int64]{}, now: now, start: r.start}
	r.callbackMu.Lock()
	if r.callback != nil {
		r.callback(obs)
	}
	r.callbackMu.Unlock()
	sm := metricdata.ScopeMetrics{Scope: instrumentation.Scope{Name: scope}}
	for _, in := range r.instruments {
		m := metricdata.Metrics{Name: in.name, Description: in.desc, Unit: in.unit}
		switch in.kind {
		case kindGauge:
			m.Data = metricdata.Gauge[int64]{DataPoints: obs.points[in]}
		case kindObsCounter:
			m.Data = metricdata.Sum[int64]{DataPoints: obs.points[in], Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
		case kindCounter, kindUpDown:
			m.Data = metricdata.Sum[int64]{DataPoints: in.sumPoints(r.start, now), Temporality: metricdata.CumulativeTemporality,
				IsMonotonic: in.kind == kindCounter}
		case kindHistogram:
			m.Data = metricdata.Histogram[float64]{DataPoints: in.histogramPoints(r.start, now), Temporality: metricdata.CumulativeTemporality}
		}
		sm.Metrics = append(sm.Metrics, m)
	}
	return &metricdata.ResourceMetrics{Resource: r.res, ScopeMetrics: []metricdata.ScopeMetrics{sm}}
}

func (in *instrument) cells() []*cell {
	in.mu.Lock()
	defer in.mu.Unlock()
	cells := make([]*cell, 0, len(in.series))
	for _, c := range in.series {
		if c.used.Load() {
			cells = append(cells, c)
		}
	}
	return cells
}

func (in *instrument) sumPoints(start, now time.Time) []metricdata.DataPoint[int64] {
	var points []metricdata.DataPoint[int64]
	for _, c := range in.cells() {
		points = append(points, metricdata.DataPoint[int64]{Attributes: c.attrs, StartTime: start, Time: now, Value: c.n.Load()})
	}
	return points
}

func (in *instrument) histogramPoints(start, now time.Time) []metricdata.HistogramDataPoint[float64] {
	var points []metricdata.HistogramDataPoint[float64]
	for _, c := range in.cells() {
		c.hmu.Lock()
		p := metricdata.HistogramDataPoint[float64]{Attributes: c.attrs, StartTime: start, Time: now,
			Count: c.count, Sum: c.sum, Bounds: in.bounds, BucketCounts: append([]uint64(nil), c.counts...)}
		if c.count > 0 {
			p.Min, p.Max = metricdata.NewExtrema(c.min), metricdata.NewExtrema(c.max)
		}
		c.hmu.Unlock()
		points = append(points, p)
	}
	return points
}
