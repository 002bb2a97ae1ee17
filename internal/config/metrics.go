package config

import (
	"encoding/json"
	"net"
	"strings"
)

// Metrics is where serve reports metrics (trunk.metrics; the --metrics
// flag wins over it). Read at start only.
type Metrics struct {
	// Listen is the loopback address of the Prometheus listener
	// ("127.0.0.1:9464"); empty serves none unless --metrics says so. The
	// listener has no authentication, so no other address is accepted.
	Listen string `json:"listen,omitempty"`
}

type rawMetrics struct {
	Listen json.RawMessage `json:"listen"`
}

// metricsOptions decodes and validates trunk.metrics.
func (p *fieldErrs) metricsOptions(raw json.RawMessage, field string) Metrics {
	var rm rawMetrics
	if !p.object(raw, field, &rm) {
		return Metrics{}
	}
	var m Metrics
	if s, ok := p.str(rm.Listen, field+".listen"); ok && s != "" {
		host, _, err := net.SplitHostPort(s)
		switch {
		case err != nil:
			p.addf(field+".listen", "must be HOST:PORT, such as 127.0.0.1:9464, got %q", s)
		case !IsLoopbackHost(host):
			p.addf(field+".listen", "must be a loopback address (127.0.0.1, [::1] or localhost), got %q: the metrics listener has no authentication", s)
		}
		m.Listen = s
	}
	return m
}

// IsLoopbackHost reports whether host (of a HOST:PORT, without brackets)
// names this machine only: localhost or a loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackHostPort reports whether a Host header (a name or address,
// with or without a port, IPv6 in brackets) names this machine: what an
// HTTP listener on a loopback address accepts, so that a web page whose
// DNS name was rebound to 127.0.0.1 is told apart.
func IsLoopbackHostPort(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return IsLoopbackHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}
