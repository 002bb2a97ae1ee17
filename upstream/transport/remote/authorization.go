package remote

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
)

// callerAuth puts Endpoint.Authorization's value on each request: the
// credential of the one caller a per-user instance serves, which its
// source keeps fresh (an exchanged token is refreshed before it expires),
// so each request asks again rather than the connection keeping one.
type callerAuth struct {
	get  func(ctx context.Context, refused string) (string, error)
	mu   sync.Mutex
	sent []string // values sent, scrubbed from anything quoted
}

// do sends req with the caller's credential. A 401 asks the source once
// more, telling it which value was refused, so that it drops that value: a new one (refreshed) is sent once; none, or the
// source's error (the caller must sign in again), ends the request.
func (a *callerAuth) do(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if err := a.apply(req); err != nil {
		return nil, err
	}
	resp, err := send(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	sent := req.Header.Get("Authorization")
	v, err := a.get(req.Context(), sent)
	if err != nil {
		httpx.DrainClose(resp)
		return nil, fmt.Errorf("the server refused the caller's credential (HTTP 401): %w", err)
	}
	if v == "" || v == sent {
		return resp, nil // reported as any 401
	}
	r, err := cloneRequest(req)
	if err != nil {
		return resp, nil
	}
	httpx.DrainClose(resp)
	if err := a.apply(r); err != nil {
		return nil, err
	}
	return send(r)
}

// apply sets the Authorization header, or leaves none when the source has
// none to give (the instance that lists a static server's catalog).
func (a *callerAuth) apply(req *http.Request) error {
	v, err := a.get(req.Context(), "")
	if err != nil {
		return fmt.Errorf("no credential for the request: %w", err)
	}
	if v == "" {
		return nil
	}
	req.Header.Set("Authorization", v)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sent {
		if s == v {
			return nil
		}
	}
	if len(a.sent) == 8 {
		a.sent = a.sent[1:]
	}
	a.sent = append(a.sent, v)
	return nil
}

// scrub blanks every value sent, and the token inside it, from s.
func (a *callerAuth) scrub(s string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, v := range a.sent {
		for _, part := range secretParts(v) {
			s = strings.ReplaceAll(s, part, "[redacted]")
		}
	}
	return s
}
