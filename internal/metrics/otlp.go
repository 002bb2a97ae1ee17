package metrics

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// OTLPConfigured says whether the standard OpenTelemetry environment asks
// for metrics over OTLP: an endpoint for all signals or for metrics, unless
// OTEL_METRICS_EXPORTER names no otlp exporter (say "none") or
// OTEL_SDK_DISABLED is true.
func OTLPConfigured(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if e := getenv("OTEL_METRICS_EXPORTER"); e != "" && !strings.Contains(e, "otlp") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// newOTLP is the OTLP/HTTP exporter, configured by the rest of the
// standard environment (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _INSECURE,
// their _METRICS_ forms); the periodic reader takes
// OTEL_METRIC_EXPORT_INTERVAL.
func newOTLP(ctx context.Context) (sdkmetric.Exporter, error) {
	return otlpmetrichttp.New(ctx)
}
