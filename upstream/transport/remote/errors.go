package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

func (p *httpPeer) netError(err error) error {
	var uErr *url.Error
	if errors.As(err, &uErr) {
		err = uErr.Err
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno) && (errno == syscall.ECONNREFUSED || errno == 10061): // 10061: WSAECONNREFUSED
		return fmt.Errorf("cannot connect to %s: connection refused (is the server running?)", p.origin.Host)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("cannot resolve %s: %v", dnsErr.Name, dnsErr.Err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("the connection to %s was lost: %v", p.origin.Host, err)
	}
	return fmt.Errorf("cannot reach %s: %v", p.origin.Host, err)
}

// statusError describes an HTTP error status, with a hint at the cause and
// what the server said about it (scrubbed of the configured header values).
func (p *httpPeer) statusError(resp *http.Response, body []byte, initialize bool) error {
	code := resp.StatusCode
	msg := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	if hint := statusHint(code, initialize, p.kind); hint != "" {
		msg += ": " + hint
	}
	if detail := p.scrub(bodyDetail(body)); detail != "" {
		msg += fmt.Sprintf(" (server said: %q)", detail)
	}
	return errors.New(msg)
}

func statusHint(code int, initialize bool, kind string) string {
	switch {
	case code == http.StatusUnauthorized:
		return "check its headers/token"
	case code == http.StatusForbidden:
		return "access denied: check its headers/token and what they allow"
	case (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) && initialize && kind == kindStreamable:
		return `check its url; a server that only speaks the older HTTP+SSE transport needs "type": "sse"`
	case code == http.StatusNotFound:
		return "check its url"
	case code == http.StatusMethodNotAllowed:
		return "check its url and type"
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return "the server is busy or rate-limiting; try again later"
	case code == http.StatusBadGateway, code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return "the server, or a gateway in front of it, is unavailable"
	case code >= 500:
		return "the server failed"
	case code >= 400:
		return "the server rejected the request"
	}
	return "unexpected status"
}

// bodyDetail extracts a short message from an error body: a JSON-RPC
// error's message, a JSON "error"/"message" string, or the first line of
// text.
func bodyDetail(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	if body[0] == '{' {
		var v struct {
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(body, &v) == nil {
			var e struct {
				Message string `json:"message"`
			}
			var s string
			switch {
			case json.Unmarshal(v.Error, &e) == nil && e.Message != "":
				return logkey.Clip(e.Message)
			case json.Unmarshal(v.Error, &s) == nil && s != "":
				return logkey.Clip(s)
			case v.Message != "":
				return logkey.Clip(v.Message)
			}
		}
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return logkey.Clip(string(line))
}

// replyFormatError is a reply the transport cannot read, as opposed to one
// it could not receive.
type replyFormatError struct{ msg string }

func (e *replyFormatError) Error() string { return e.msg }

// readError describes a failure while reading a reply.
func (p *httpPeer) readError(err error) error {
	var fe *replyFormatError
	switch {
	case errors.As(err, &fe):
		return err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("the connection to %s was lost while reading the reply: %v", p.origin.Host, err)
	}
	return fmt.Errorf("reading the reply failed: %v", err)
}
