// Package metrics counts what the trunk does for its host and reports the
// state of its servers: one set of instruments of its own (store.go), read
// into OpenTelemetry's data model at each scrape of /metrics, written in the
// Prometheus text format with the Go runtime's and the process's own
// metrics beside them, and, when the standard OTLP environment asks for it,
// sent periodically over OTLP too (internal/otlp).
//
// Requests are counted by an observe.Observer; server states, restarts,
// dropped notifications, parked calls and pin drift are read from the
// trunk's Status at collection time, so nothing is counted twice and a
// trunk without metrics pays nothing.
//
// Label values come from the host (a method, a tool name, a server name
// in it), so each label is bounded: the first values seen are kept and the
// rest reported as "other" (see bounded).
package metrics
