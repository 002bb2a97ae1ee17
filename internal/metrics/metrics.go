package metrics

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel/attribute"
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
	// Logger gets the OTLP export's failures (slog.Default() when nil).
	Logger *slog.Logger
}

// Metrics is the trunk's instruments and what exports them. It is an
// observe.Observer; Handler serves the Prometheus exposition.
type Metrics struct {
	reg  registry
	otlp *periodic // nil without OTLP export

	requests *instrument
	duration *instrument
	sizeIn   *instrument
	sizeOut  *instrument
	inFlight *instrument
	gauges   statusGauges
	tasks    taskCounters

	methods, servers, items *bounded
	sets                    sync.Map // labelKey -> *labelSets
}

// New makes the instruments and, when the environment configures one, an
// OTLP exporter that sends them periodically.
func New(ctx context.Context, opts Options) (*Metrics, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Metrics{methods: newBounded(maxMethods), servers: newBounded(maxServers), items: newBounded(maxItems)}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "mcptrunk"), attribute.String("service.version", opts.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, err
	}
	m.reg.res, m.reg.start = res, time.Now()
	m.instruments()
	if OTLPConfigured(getenv) {
		logger := opts.Logger
		if logger == nil {
			logger = slog.Default()
		}
		if m.otlp, err = newPeriodic(getenv, m.reg.collect, logger); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// OTLP says whether the metrics are also exported over OTLP.
func (m *Metrics) OTLP() bool { return m.otlp != nil }

// Handler serves the Prometheus text exposition of the trunk's metrics
// and the Go runtime's and the process's (go_*, process_*), gzipped when
// the scraper takes gzip.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fams := append(families(m.reg.collect()), runtimeFamilies()...)
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

// Shutdown stops reading the status and, with OTLP export, stops it
// after sending what was counted; ctx bounds that send.
func (m *Metrics) Shutdown(ctx context.Context) error {
	m.reg.callbackMu.Lock()
	m.reg.callback = nil
	m.reg.callbackMu.Unlock()
	if m.otlp == nil {
		return nil
	}
	return m.otlp.shutdown(ctx)
}

var _ observe.Observer = (*Metrics)(nil)
