package metrics

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The Prometheus text exposition format (version 0.0.4), written from
// the instruments' data as Prometheus' own OpenTelemetry exporter writes
// it: dots become underscores, the unit is a suffix (s as seconds, By as
// bytes, a {count} unit none), a monotonic sum is a counter with _total,
// any other sum and a gauge are gauges, a histogram has its _bucket,
// _sum and _count series.

// contentType is the exposition's media type.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// family is one metric family of the exposition: its series in order.
type family struct {
	name, help, typ string
	series          []series
}

// series is one line: the suffix after the family's name (_bucket, _sum,
// _count or none), its labels written out, and its value.
type series struct {
	suffix, labels string
	value          float64
}

// promName is the exposition's name for an instrument.
func promName(m metricdata.Metrics) (name, typ string) {
	name = sanitize(m.Name)
	if u := promUnit(m.Unit); u != "" && !strings.HasSuffix(name, "_"+u) {
		name += "_" + u
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		typ = sumType(d.IsMonotonic)
	case metricdata.Sum[float64]:
		typ = sumType(d.IsMonotonic)
	case metricdata.Histogram[int64], metricdata.Histogram[float64]:
		typ = "histogram"
	default:
		typ = "gauge"
	}
	if typ == "counter" && !strings.HasSuffix(name, "_total") {
		name += "_total"
	}
	return name, typ
}

func sumType(monotonic bool) string {
	if monotonic {
		return "counter"
	}
	return "gauge"
}

// promUnit is a unit's suffix: a UCUM unit as a word, an annotation
// ({request}) none.
func promUnit(u string) string {
	switch {
	case u == "" || u == "1" || strings.HasPrefix(u, "{"):
		return ""
	case u == "s":
		return "seconds"
	case u == "ms":
		return "milliseconds"
	case u == "By":
		return "bytes"
	}
	return sanitize(u)
}

// sanitize makes s a valid metric or label name: every character outside
// [a-zA-Z0-9_] (a dot, mostly) becomes an underscore, and a leading digit
// gets one before it.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// families are the exposition's families for the collected data.
func families(rm *metricdata.ResourceMetrics) []family {
	var out []family
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name, typ := promName(m)
			f := family{name: name, help: m.Description, typ: typ}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				f.series = numberSeries(d.DataPoints)
			case metricdata.Sum[float64]:
				f.series = numberSeries(d.DataPoints)
			case metricdata.Gauge[int64]:
				f.series = numberSeries(d.DataPoints)
			case metricdata.Gauge[float64]:
				f.series = numberSeries(d.DataPoints)
			case metricdata.Histogram[int64]:
				f.series = histogramSeries(d.DataPoints)
			case metricdata.Histogram[float64]:
				f.series = histogramSeries(d.DataPoints)
			default:
				continue // no instrument of the trunk's makes another
			}
			out = append(out, f)
		}
	}
	return out
}

func numberSeries[N int64 | float64](points []metricdata.DataPoint[N]) []series {
	s := make([]series, 0, len(points))
	for _, p := range points {
		s = append(s, series{labels: labelString(p.Attributes.ToSlice(), "", ""), value: float64(p.Value)})
	}
	slices.SortFunc(s, func(a, b series) int { return strings.Compare(a.labels, b.labels) })
	return s
}

func histogramSeries[N int64 | float64](points []metricdata.HistogramDataPoint[N]) []series {
	slices.SortFunc(points, func(a, b metricdata.HistogramDataPoint[N]) int {
		return strings.Compare(labelString(a.Attributes.ToSlice(), "", ""), labelString(b.Attributes.ToSlice(), "", ""))
	})
	var s []series
	for _, p := range points {
		attrs := p.Attributes.ToSlice()
		var cum uint64
		for i, n := range p.BucketCounts {
			cum += n
			le := "+Inf"
			if i < len(p.Bounds) {
				le = formatFloat(p.Bounds[i])
			}
			s = append(s, series{suffix: "_bucket", labels: labelString(attrs, "le", le), value: float64(cum)})
		}
		base := labelString(attrs, "", "")
		s = append(s, series{suffix: "_sum", labels: base, value: float64(p.Sum)},
			series{suffix: "_count", labels: base, value: float64(p.Count)})
	}
	return s
}

// labelString is {name="value",...} with the names sanitized and sorted
// (attribute sets are sorted by key already), plus extra=value last (a
// histogram's le), or "" for no labels.
func labelString(attrs []attribute.KeyValue, extra, extraValue string) string {
	if len(attrs) == 0 && extra == "" {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, kv := range attrs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeLabel(&b, sanitize(string(kv.Key)), kv.Value.String())
	}
	if extra != "" {
		if len(attrs) > 0 {
			b.WriteByte(',')
		}
		writeLabel(&b, extra, extraValue)
	}
	b.WriteByte('}')
	return b.String()
}

func writeLabel(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteString(`="`)
	labelEscaper.WriteString(b, value)
	b.WriteByte('"')
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

// formatFloat writes a value as Prometheus does.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// writeExposition writes fams sorted by name.
func writeExposition(w io.Writer, fams []family) error {
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		if len(f.series) == 0 {
			continue
		}
		if f.help != "" {
			bw.WriteString("# HELP " + f.name + " ")
			helpEscaper.WriteString(bw, f.help)
			bw.WriteByte('\n')
		}
		bw.WriteString("# TYPE " + f.name + " " + f.typ + "\n")
		for _, s := range f.series {
			bw.WriteString(f.name + s.suffix + s.labels + " " + formatFloat(s.value) + "\n")
		}
	}
	return bw.Flush()
}
