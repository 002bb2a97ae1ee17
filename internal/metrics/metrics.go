package metrics

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// scope names the instruments' meter, as OTLP receivers see it.
const scope = "github.com/mcptrunk/mcptrunk/internal/metrics"

// Options configure New.
type Options struct {
	// Version is the trunk's version, reported as service.version.
	Version string
	// Getenv reads the OTLP exporter's environment (os.Getenv when nil);
	// OTLP export is on when it names an endpoint (see OTLPConfigured).
	Getenv func(string) string
}

// Metrics is the trunk's instruments and the readers that export them. It
// is an observe.Observer; Handler serves the Prometheus exposition.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	scraped  *sdkmetric.ManualReader // read at each scrape of /metrics
	otlp     bool
	meter    metric.Meter
	status   metric.Registration

	requests metric.Int64Counter
	duration metric.Float64Histogram
	sizeIn   metric.Int64Counter
	sizeOut  metric.Int64Counter
	inFlight metric.Int64UpDownCounter
	gauges   statusGauges
	tasks    taskCounters

	methods, servers, items *bounded
	sets                    sync.Map // labelKey -> *labelSets
}

// New makes the instruments, the reader /metrics is served from and, when
// the environment configures one, an OTLP exporter.
func New(ctx context.Context, opts Options) (*Metrics, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Metrics{scraped: sdkmetric.NewManualReader(),
		methods: newBounded(maxMethods), servers: newBounded(maxServers), items: newBounded(maxItems)}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "mcptrunk"), attribute.String("service.version", opts.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, err
	}
	popts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(m.scraped), sdkmetric.WithCardinalityLimit(cardinalityLimit)}
	if OTLPConfigured(getenv) {
		exp, err := newOTLP(ctx, getenv)
		if err != nil {
			return nil, err
		}
		popts = append(popts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
		m.otlp = true
	}
	m.provider = sdkmetric.NewMeterProvider(popts...)
	m.meter = m.provider.Meter(scope)
	if err := m.instruments(); err != nil {
		return nil, errors.Join(err, m.provider.Shutdown(ctx))
	}
	return m, nil
}

// OTLP says whether the metrics are also exported over OTLP.
func (m *Metrics) OTLP() bool { return m.otlp }

// Handler serves the Prometheus text exposition of the trunk's metrics
// and the Go runtime's and the process's (go_*, process_*), gzipped when
// the scraper takes gzip.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rm metricdata.ResourceMetrics
		if err := m.scraped.Collect(r.Context(), &rm); err != nil {
			http.Error(w, "collecting the metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fams := append(families(&rm), runtimeFamilies()...)
		fams = append(fams, processFamilies()...)
		w.Header().Set("Content-Type", contentType)
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			defer zw.Close()
			out = zw
		}
		_ = writeExposition(out, fams)
	})
}

// acceptsGzip says whether an Accept-Encoding header lists gzip (with a
// q-value other than 0).
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(coding) == "gzip" {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}

// Shutdown stops the readers; the OTLP exporter sends what it has left.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m.status != nil {
		_ = m.status.Unregister()
	}
	return m.provider.Shutdown(ctx)
}

var _ observe.Observer = (*Metrics)(nil)
