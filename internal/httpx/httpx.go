// Package httpx holds the small HTTP helpers that the HTTP transports and the
// OAuth client share: setting configured headers, reading and draining
// bodies, bearer tokens.
package httpx

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// SetHeaders sets the configured headers on req; "Host" sets the request's
// host rather than a header, as net/http wants.
func SetHeaders(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
}

// ReadLimited reads at most n bytes of body.
func ReadLimited(body io.Reader, n int64) []byte {
	b, _ := io.ReadAll(io.LimitReader(body, n))
	return b
}

// DrainClose discards a little of the rest of a body (so the connection can
// be reused) and closes it.
func DrainClose(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}

// MediaType is the response's media type, lower case, without parameters.
func MediaType(resp *http.Response) string {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return strings.ToLower(mt)
}

// Is2xx reports whether code is a success status.
func Is2xx(code int) bool { return code >= 200 && code < 300 }

// Sleep waits d; false when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
