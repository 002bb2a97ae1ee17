// Package tracing exports OpenTelemetry traces of the trunk's work: a
// server span for each host request (an observe.Observer) and a client span
// for each request sent upstream on its behalf (an
// outgoing.Observer the host span's ctx carries), with the W3C
// trace context read from the host request's params._meta and written to
// the upstream request's (and, over HTTP, its traceparent header), so one
// trace runs host -> trunk -> server.
//
// It is configured only by the standard OTEL_* environment variables and
// is off, with nothing set up at all, unless an OTLP endpoint is named:
// tracing is for the operator who runs a collector, and a trunk without
// one must cost nothing.
package tracing
