package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the trunk's tracer provider, set up from the environment.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TraceContext
}

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set (for traces or for all signals), the SDK is not
// disabled, and the traces exporter is not "none".
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Setup returns the trunk's tracing as the OTEL_* environment configures
// it, or nil when Enabled is false. The exporter (internal/otlp) reads the
// endpoint, protocol, headers, timeout, compression and TLS variables, the
// SDK the sampler (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the batch
// processor (OTEL_BSP_*) and the resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES). Export failures are logged to logger; they
// never quote a header value.
func Setup(ctx context.Context, version string, logger *slog.Logger) (*Tracing, error) {
	if !Enabled(os.Getenv) {
		return nil, nil
	}
	exporter, err := newExporter(ctx, os.Getenv)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("mcptrunk"), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // last, so OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && res == nil {
		_ = exporter.Shutdown(ctx)
		return nil, fmt.Errorf("traces: the resource: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("traces: export failed", logkey.Error, err)
	}))
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return &Tracing{
		provider: provider,
		tracer: provider.Tracer("github.com/mcptrunk/mcptrunk",
			trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL)),
	}, nil
}

// Observer is the observe.Observer that starts the span of each host
// request.
func (t *Tracing) Observer() observe.Observer { return (*observer)(t) }

// Shutdown exports the spans still buffered and stops the exporter; ctx
// bounds how long that may take.
func (t *Tracing) Shutdown(ctx context.Context) error {
	return t.provider.Shutdown(ctx)
}
