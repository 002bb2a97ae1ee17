package otlp

import (
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// The endpoint resolves as the OTLP spec says: the general one is a base
// the signal's path is added to, the signal's own is used as it is, a
// gRPC one is a host the service's method is called on.
func TestEndpoint(t *testing.T) {
	for _, c := range []struct {
		env      []string
		sig      Signal
		want     string
		insecure bool
	}{
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://col:4318"}, Traces, "http://col:4318/v1/traces", true},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://col/otlp/"}, Metrics, "https://col/otlp/v1/metrics", false},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/custom"}, Traces, "https://b/custom", false},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b"}, Traces, "https://b/", false},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b"}, Metrics, "http://localhost:4318/v1/metrics", true},
		{[]string{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://col:4317/ignored"}, Traces,
			"http://col:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export", true},
		{[]string{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "col:4317"}, Metrics,
			"https://col:4317/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", false},
		{[]string{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "col:4317", "OTEL_EXPORTER_OTLP_INSECURE", "true"}, Metrics,
			"http://col:4317/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", true},
	} {
		cfg, err := ConfigFromEnv(c.sig, env(c.env...))
		if err != nil {
			t.Errorf("%v: %v", c.env, err)
			continue
		}
		if cfg.URL.String() != c.want || cfg.Insecure != c.insecure {
			t.Errorf("%v: %s (insecure %v), want %s (%v)", c.env, cfg.URL, cfg.Insecure, c.want, c.insecure)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	cfg, err := ConfigFromEnv(Traces, env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://col",
		"OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%2Cb, x-tenant = t1 ", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "only=this",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT", "2500"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Headers) != 1 || cfg.Headers["only"] != "this" || !cfg.Gzip || cfg.Timeout != 2500*time.Millisecond || cfg.Protocol != ProtocolHTTP {
		t.Errorf("%+v", cfg)
	}
	cfg, err = ConfigFromEnv(Metrics, env("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%2Cb, x-tenant = t1 "))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Headers) != 2 || cfg.Headers["api-key"] != "a,b" || cfg.Headers["x-tenant"] != "t1" || cfg.Timeout != 10*time.Second {
		t.Errorf("headers %v, timeout %v", cfg.Headers, cfg.Timeout)
	}
}

// A variable set wrong is an error naming it, never quoting a header's
// value.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL http/json is not supported"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "col:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://col"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{[]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{[]string{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"}, "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{[]string{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{[]string{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem"}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{[]string{"OTEL_EXPORTER_OTLP_HEADERS", "api-key=%zzsecret"}, "OTEL_EXPORTER_OTLP_HEADERS: header api-key"},
	} {
		_, err := ConfigFromEnv(Traces, env(c.env...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error quotes the header's value: %v", c.env, err)
		}
	}
}

// A wrong header pair or endpoint is an error that names the variable and
// the pair's place but quotes nothing of what was set: a pair written as
// "Authorization: Bearer …" is a token, an endpoint's userinfo a password,
// and url.Parse's own error quotes the whole URL.
func TestConfigErrorsKeepSecrets(t *testing.T) {
	const token, password = "tok3nXYZ", "pa55%word"
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=t1,Authorization: Bearer " + token}, "OTEL_EXPORTER_OTLP_HEADERS: pair 2 has no '='"},
		{[]string{"OTEL_EXPORTER_OTLP_HEADERS", "Authorization: Bearer " + token + "="}, "OTEL_EXPORTER_OTLP_HEADERS: pair 1: its key has a space or ':'"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "=" + token}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS: pair 1 has no key"},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:" + password + "@col:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://collector:pa55word@col"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the scheme is not http or https"},
	} {
		_, err := ConfigFromEnv(Traces, env(c.env...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.env, err, c.want)
			continue
		}
		for _, secret := range []string{token, password, "pa55", "Bearer", "collector"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%v: the error quotes %q: %v", c.env, secret, err)
			}
		}
	}
}
