package metrics

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Requests counted from many goroutines at once, with scrapes between
// them, all arrive.
func TestConcurrentRequests(t *testing.T) {
	m := newTest(t)
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r := observe.Request{Method: "tools/call", Server: "notes", Item: fmt.Sprintf("mcp__notes__t%d", (g+i)%3)}
				_, end := m.Begin(context.Background(), r)
				end(observe.Outcome{Result: []byte(`{}`), Duration: time.Millisecond})
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			m.reg.collect()
		}
	})
	wg.Wait()
	fams := scrape(t, m)
	var total float64
	for _, s := range fams["mcptrunk_requests_total"].Metric {
		total += s.Counter.GetValue()
	}
	if total != goroutines*each {
		t.Errorf("%v requests counted, want %d", total, goroutines*each)
	}
	if got, _ := value(fams, "mcptrunk_request_duration_seconds", map[string]string{"server": "notes", "method": "tools/call"}); got != goroutines*each {
		t.Errorf("%v durations, want %d", got, goroutines*each)
	}
}

// Past cardinalityLimit series, an instrument's measurements go to one
// overflow series, as an OpenTelemetry SDK's do, and none is lost.
func TestCardinalityOverflow(t *testing.T) {
	var r registry
	in := r.newInstrument(kindCounter, "c", "", "")
	for i := range cardinalityLimit + 10 {
		in.cell(attribute.NewSet(attribute.Int("i", i))).add(1)
	}
	points := r.collect().ScopeMetrics[0].Metrics[0].Data.(metricdata.Sum[int64]).DataPoints
	if len(points) != cardinalityLimit {
		t.Errorf("%d series, want %d", len(points), cardinalityLimit)
	}
	var sum, over int64
	for _, p := range points {
		sum += p.Value
		if p.Attributes.Equals(&overflow) {
			over = p.Value
		}
	}
	if sum != cardinalityLimit+10 || over != 11 {
		t.Errorf("sum %d, overflow %d; want %d and 11", sum, over, cardinalityLimit+10)
	}
}
