// Package otlp sends OpenTelemetry data to a collector over OTLP, as the
// standard OTEL_EXPORTER_OTLP_* environment configures it: the protobuf
// wire encoding of the messages the trunk sends (written by hand: the
// trunk sends a handful of message types and needs none of a generated
// package's reflection), and a client that posts them over OTLP/HTTP or
// OTLP/gRPC (plain net/http, HTTP/2 for gRPC) with the spec's retries.
//
// internal/tracing encodes spans and internal/metrics metric data with
// it; the common messages (resource, scope, attributes) are here.
package otlp
