package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Signal is what an exporter sends: its name in the environment's
// per-signal variables, its OTLP/HTTP path and its gRPC method.
type Signal struct {
	env, path, method string
}

// The signals the trunk exports.
var (
	Traces  = Signal{env: "TRACES", path: "/v1/traces", method: "/opentelemetry.proto.collector.trace.v1.TraceService/Export"}
	Metrics = Signal{env: "METRICS", path: "/v1/metrics", method: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"}
)

// Protocols.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config is where and how an exporter sends one signal, as the standard
// environment says: OTEL_EXPORTER_OTLP_* and OTEL_EXPORTER_OTLP_<SIGNAL>_*
// (which wins), for the endpoint, protocol, headers, compression, timeout,
// TLS files and insecure.
type Config struct {
	Protocol string
	// URL is where requests go: for OTLP/HTTP the signal's endpoint as the
	// spec resolves it, for gRPC the collector's scheme and host with the
	// service's method as the path.
	URL      *url.URL
	Headers  map[string]string
	Gzip     bool
	Timeout  time.Duration
	TLS      *tls.Config // nil for the system's roots and no client certificate
	Insecure bool        // plain text (http://, or gRPC with OTEL_EXPORTER_OTLP_INSECURE=true)
}

// ConfigFromEnv reads sig's configuration from getenv (os.Getenv when
// nil). A variable that is set but wrong is an error naming it, so a typo
// is found at start, not as spans that never arrive.
func ConfigFromEnv(sig Signal, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	// get is the signal's variable, else the general one; name is which.
	get := func(suffix string) (value, name string) {
		name = "OTEL_EXPORTER_OTLP_" + sig.env + "_" + suffix
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, name
		}
		name = "OTEL_EXPORTER_OTLP_" + suffix
		return strings.TrimSpace(getenv(name)), name
	}
	c := &Config{Timeout: 10 * time.Second}
	var err error
	switch p, name := get("PROTOCOL"); p {
	case "", ProtocolHTTP:
		c.Protocol = ProtocolHTTP
	case ProtocolGRPC:
		c.Protocol = ProtocolGRPC
	case "http/json":
		return nil, fmt.Errorf("%s http/json is not supported; use http/protobuf or grpc", name)
	default:
		return nil, fmt.Errorf("unknown %s %q (http/protobuf or grpc)", name, p)
	}

	raw, name := get("ENDPOINT")
	perSignal := name == "OTEL_EXPORTER_OTLP_"+sig.env+"_ENDPOINT"
	if raw == "" {
		raw, perSignal = "http://localhost:4318", false
		if c.Protocol == ProtocolGRPC {
			raw = "http://localhost:4317"
		}
	}
	var u *url.URL
	if c.Protocol == ProtocolGRPC && !strings.Contains(raw, "://") {
		u = &url.URL{Scheme: "https", Host: raw} // gRPC's host:port form
	} else if u, err = url.Parse(raw); err != nil || u.Host == "" {
		// Neither the value nor url.Parse's error, which quotes it: its
		// userinfo may hold a password.
		return nil, fmt.Errorf("%s is not an http:// or https:// URL", name)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		c.Insecure = true
	case "https":
	default:
		return nil, fmt.Errorf("%s: the scheme is not http or https", name)
	}
	if c.Protocol == ProtocolGRPC {
		if v, name := get("INSECURE"); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not true or false", name, v)
			}
			c.Insecure = c.Insecure || b
		}
		scheme := "https"
		if c.Insecure {
			scheme = "http"
		}
		c.URL = &url.URL{Scheme: scheme, Host: u.Host, Path: sig.method}
	} else {
		c.URL = &url.URL{Scheme: u.Scheme, Host: u.Host, User: u.User, RawQuery: u.RawQuery}
		switch {
		case perSignal && u.Path == "":
			c.URL.Path = "/"
		case perSignal:
			c.URL.Path = u.Path
		default:
			c.URL.Path = path.Join("/", u.Path, sig.path)
		}
	}

	if v, name := get("HEADERS"); v != "" {
		if c.Headers, err = parseHeaders(v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	switch v, name := get("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		c.Gzip = true
	default:
		return nil, fmt.Errorf("%s: %q (gzip or none)", name, v)
	}
	if v, name := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s: %q is not a number of milliseconds", name, v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	if c.TLS, err = tlsFromEnv(get); err != nil {
		return nil, err
	}
	return c, nil
}

// parseHeaders reads "key=value,key2=value2" with URL-escaped values. The
// error names a well-formed key or else the pair's place, never a value nor
// a malformed key (a value is often a secret, and "Authorization: Bearer
// token" written by mistake is all key).
func parseHeaders(s string) (map[string]string, error) {
	h := map[string]string{}
	n := 0
	for pair := range strings.SplitSeq(s, ",") {
		n++
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok:
			return nil, fmt.Errorf("pair %d has no '=' (key=value)", n)
		case k == "":
			return nil, fmt.Errorf("pair %d has no key before its '='", n)
		case strings.ContainsAny(k, " \t\r\n:"):
			return nil, fmt.Errorf("pair %d: its key has a space or ':' (key=value, not key: value)", n)
		}
		value, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("header %s: its value is not URL-escaped text", k)
		}
		h[k] = value
	}
	return h, nil
}

// tlsFromEnv is the TLS configuration CERTIFICATE (the roots to trust),
// CLIENT_CERTIFICATE and CLIENT_KEY (PEM files) ask for, nil when none is
// set.
func tlsFromEnv(get func(string) (string, string)) (*tls.Config, error) {
	ca, caName := get("CERTIFICATE")
	cert, certName := get("CLIENT_CERTIFICATE")
	key, keyName := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caName, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s has no PEM certificate", caName, ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, errors.New(certName + " and " + keyName + " go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
