package otlp

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A retryable answer (503) is tried again; a permanent one (400) is not,
// and its error names the collector's host and status, not the URL's
// credentials.
func TestSendRetries(t *testing.T) {
	var tries atomic.Int32
	// answer is the status of the nth try.
	var answer atomic.Pointer[func(n int32) int]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Equal(body, []byte("msg")) || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("body %q, headers %v", body, r.Header)
		}
		w.WriteHeader((*answer.Load())(tries.Add(1)))
	}))
	defer srv.Close()
	cfg, err := ConfigFromEnv(Traces, env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", strings.Replace(srv.URL, "http://", "http://user:pw@", 1)))
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(cfg)
	defer c.Close()
	c.firstWait = time.Millisecond
	send := func(ctx context.Context, status func(n int32) int) error {
		tries.Store(0)
		answer.Store(&status)
		return c.Send(ctx, []byte("msg"))
	}

	err = send(t.Context(), func(n int32) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	if err != nil || tries.Load() != 4 {
		t.Errorf("three 503s then a 200: %v after %d tries, want success after 4", err, tries.Load())
	}

	err = send(t.Context(), func(int32) int { return http.StatusBadRequest })
	if err == nil || !strings.Contains(err.Error(), "400") || strings.Contains(err.Error(), "pw") || tries.Load() != 1 {
		t.Errorf("a 400: %v after %d tries, want one try and an error naming it without the URL's password", err, tries.Load())
	}

	// A collector that keeps answering 503 is given up on when ctx ends
	// (here during the second try).
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err = send(ctx, func(n int32) int {
		if n == 2 {
			cancel()
		}
		return http.StatusServiceUnavailable
	})
	if !errors.Is(err, context.Canceled) || tries.Load() != 2 {
		t.Errorf("cancelled while retrying: %v after %d tries", err, tries.Load())
	}
}

// Over gRPC with TLS (ALPN h2, the roots from OTEL_EXPORTER_OTLP_CERTIFICATE)
// the message goes in a length-prefixed frame, and the status comes in the
// trailers: UNAVAILABLE is retried, INVALID_ARGUMENT is not, and its
// message is in the error.
func TestSendGRPCOverTLS(t *testing.T) {
	var tries atomic.Int32
	var answer atomic.Pointer[func(n int32) (status, msg string)]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		want := append([]byte{0, 0, 0, 0, 3}, "msg"...)
		if r.ProtoMajor != 2 || r.Header.Get("Content-Type") != "application/grpc" || !bytes.Equal(body, want) ||
			r.URL.Path != "/opentelemetry.proto.collector.trace.v1.TraceService/Export" {
			t.Errorf("HTTP/%d %s %v: %q", r.ProtoMajor, r.URL.Path, r.Header, body)
		}
		status, msg := (*answer.Load())(tries.Add(1))
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		w.WriteHeader(http.StatusOK)
		w.Header().Set("Grpc-Status", status)
		w.Header().Set("Grpc-Message", msg)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFromEnv(Traces, env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL,
		"OTEL_EXPORTER_OTLP_CERTIFICATE", ca))
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(cfg)
	defer c.Close()
	c.firstWait = time.Millisecond
	send := func(status func(n int32) (string, string)) error {
		tries.Store(0)
		answer.Store(&status)
		return c.Send(t.Context(), []byte("msg"))
	}

	err = send(func(n int32) (string, string) {
		if n == 1 {
			return "14", "try later"
		}
		return "0", ""
	})
	if err != nil || tries.Load() != 2 {
		t.Errorf("UNAVAILABLE then OK: %v after %d tries", err, tries.Load())
	}
	err = send(func(int32) (string, string) { return "3", "bad%20span" })
	if err == nil || !strings.Contains(err.Error(), "gRPC status 3: bad span") || tries.Load() != 1 {
		t.Errorf("INVALID_ARGUMENT: %v after %d tries", err, tries.Load())
	}
}
