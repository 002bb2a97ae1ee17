package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
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

// newOTLP is the OTLP exporter OTEL_EXPORTER_OTLP_METRICS_PROTOCOL (or
// OTEL_EXPORTER_OTLP_PROTOCOL) names, http/protobuf by default or grpc,
// configured by the rest of the standard environment (headers, timeout,
// TLS, their _METRICS_ forms); the periodic reader takes
// OTEL_METRIC_EXPORT_INTERVAL.
func newOTLP(ctx context.Context, getenv func(string) string) (sdkmetric.Exporter, error) {
	protocol := getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch strings.TrimSpace(protocol) {
	case "", "http/protobuf":
		return otlpmetrichttp.New(ctx)
	case "grpc":
		return otlpmetricgrpc.New(ctx)
	case "http/json":
		return nil, errors.New("metrics: OTEL_EXPORTER_OTLP_PROTOCOL http/json is not supported; use http/protobuf or grpc")
	default:
		return nil, fmt.Errorf("metrics: unknown OTEL_EXPORTER_OTLP_PROTOCOL %q (http/protobuf or grpc)", protocol)
	}
}
