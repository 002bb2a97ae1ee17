package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Client posts encoded export requests to a collector.
type Client struct {
	cfg       *Config
	http      *http.Client
	firstWait time.Duration // before the first retry, doubling up to maxWait
}

// NewClient is a client for cfg. Its connections are its own, closed by
// Close.
func NewClient(cfg *Config) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS // the proxy is the environment's (HTTPS_PROXY, NO_PROXY), as the OpenTelemetry exporters have it
	if cfg.Protocol == ProtocolGRPC {
		// gRPC is HTTP/2 only: with TLS through ALPN, in plain text with
		// prior knowledge (h2c), as gRPC servers expect; h2c cannot pass
		// a forward proxy, so it goes straight to the collector.
		var p http.Protocols
		if cfg.Insecure {
			p.SetUnencryptedHTTP2(true)
			tr.Proxy = nil
		} else {
			p.SetHTTP2(true)
		}
		tr.Protocols = &p
	}
	return &Client{cfg: cfg, http: &http.Client{Transport: tr}, firstWait: firstWait}
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Retries as the OTLP exporters do them: a retryable failure is tried
// again after a growing, jittered wait (or what the collector asks for),
// for at most maxElapsed in all.
const (
	firstWait  = 5 * time.Second
	maxWait    = 30 * time.Second
	maxElapsed = time.Minute
)

// Send sends one export request's body (the encoded
// Export<Signal>ServiceRequest), retrying what the spec says is retryable
// until the configured timeout, ctx's end or a minute, whichever is first.
// A partial success (items the collector rejected) is an error too. The
// error names the collector's host and answer, never a header value.
func (c *Client) Send(ctx context.Context, msg []byte) error {
	body, err := c.body(msg)
	if err != nil {
		return err
	}
	if c.cfg.Timeout > 0 {
		// The timeout bounds the export, retries included, as in the
		// OpenTelemetry exporters.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	start, wait := time.Now(), c.firstWait
	for {
		retry, after, err := c.try(ctx, body)
		if err == nil || !retry {
			return err
		}
		if after <= 0 {
			after = wait/2 + rand.N(wait/2+1)
			wait = min(2*wait, maxWait)
		}
		if time.Since(start)+after > maxElapsed {
			return err
		}
		t := time.NewTimer(after)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// body is what is posted: for gRPC the message in its length-prefixed
// frame, gzipped when configured.
func (c *Client) body(msg []byte) ([]byte, error) {
	if c.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(msg); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		msg = buf.Bytes()
	}
	if c.cfg.Protocol != ProtocolGRPC {
		return msg, nil
	}
	frame := make([]byte, 5, 5+len(msg))
	if c.cfg.Gzip {
		frame[0] = 1
	}
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	return append(frame, msg...), nil
}

// try posts body once; retry says whether a failure may be retried, after
// how long the collector asked to wait (0: not said).
func (c *Client) try(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL.String(), bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	if c.cfg.Protocol == ProtocolGRPC {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		if c.cfg.Gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if c.cfg.Gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// Not reached, or the connection broke: worth another try
		// unless ctx ended.
		return ctx.Err() == nil, 0, fmt.Errorf("%s: %w", c.where(), scrubURL(err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return ctx.Err() == nil, 0, fmt.Errorf("%s: reading the answer: %w", c.where(), err)
	}
	if c.cfg.Protocol == ProtocolGRPC {
		if retry, after, err := c.grpcStatus(resp); err != nil {
			return retry, after, err
		}
		return false, 0, c.partial(grpcMessage(answer))
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		if resp.Header.Get("Content-Type") != "application/x-protobuf" {
			return false, 0, nil
		}
		return false, 0, c.partial(answer)
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("%s: HTTP %s", c.where(), resp.Status)
	}
	return false, 0, fmt.Errorf("%s: HTTP %s", c.where(), resp.Status)
}

// grpcStatus reads a gRPC answer's status: in the trailers, or in the
// headers of a trailers-only answer.
func (c *Client) grpcStatus(resp *http.Response) (bool, time.Duration, error) {
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusBadGateway ||
			resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout
		return retry, 0, fmt.Errorf("%s: HTTP %s", c.where(), resp.Status)
	}
	status, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if status == "" {
		status, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	code, err := strconv.Atoi(status)
	if err != nil {
		return false, 0, fmt.Errorf("%s: an answer without a gRPC status", c.where())
	}
	if code == 0 {
		return false, 0, nil
	}
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	// CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED,
	// OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS are retryable (the OTLP spec).
	switch code {
	case 1, 4, 8, 10, 11, 14, 15:
		return true, 0, fmt.Errorf("%s: gRPC status %d: %s", c.where(), code, msg)
	}
	return false, 0, fmt.Errorf("%s: gRPC status %d: %s", c.where(), code, msg)
}

// partial is the error for a response that says the collector rejected
// part of the export, nil when it rejected nothing. It is not retried: the
// collector has said the rejected items are bad.
func (c *Client) partial(resp []byte) error {
	rejected, msg := partialSuccess(resp)
	if rejected == 0 && msg == "" {
		return nil
	}
	return fmt.Errorf("%s: the collector rejected %d item(s): %s", c.where(), rejected, msg)
}

// grpcMessage is the message in a gRPC answer's first frame, unzipped if
// the server compressed it; nil if there is none.
func grpcMessage(b []byte) []byte {
	if len(b) < 5 {
		return nil
	}
	n := binary.BigEndian.Uint32(b[1:5])
	if uint64(n) > uint64(len(b)-5) {
		return nil
	}
	msg := b[5 : 5+n]
	if b[0] == 1 {
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return nil
		}
		if msg, err = io.ReadAll(io.LimitReader(zr, 1<<20)); err != nil {
			return nil
		}
	}
	return msg
}

// where names the collector in an error: its host, not the URL (which may
// carry credentials).
func (c *Client) where() string { return "OTLP export to " + c.cfg.URL.Host }

// scrubURL drops the URL from a transport error: the host is named by
// where, and the URL may carry credentials.
func scrubURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryAfter is a Retry-After header's wait in seconds, 0 when it has none
// (or a date, which collectors do not send).
func retryAfter(v string) time.Duration {
	s, err := strconv.Atoi(v)
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, maxElapsed)
}
