package metrics

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
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
	registry *prometheus.Registry
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

// New makes the instruments, a Prometheus reader on a registry of their
// own (the process's global registry is left alone, so nothing else in the
// process shows up at /metrics) and, when the environment configures one,
// an OTLP exporter.
func New(ctx context.Context, opts Options) (*Metrics, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Metrics{registry: prometheus.NewRegistry(),
		methods: newBounded(maxMethods), servers: newBounded(maxServers), items: newBounded(maxItems)}
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	prom, err := otelprom.New(otelprom.WithRegisterer(m.registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo(),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "mcptrunk"), attribute.String("service.version", opts.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, err
	}
	popts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom), sdkmetric.WithCardinalityLimit(cardinalityLimit)}
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

// Handler serves the Prometheus text exposition of the trunk's metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Shutdown stops the readers; the OTLP exporter sends what it has left.
func (m *Metrics) Shutdown(ctx context.Context) error {
	if m.status != nil {
		_ = m.status.Unregister()
	}
	return m.provider.Shutdown(ctx)
}

var _ observe.Observer = (*Metrics)(nil)
