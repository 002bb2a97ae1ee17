package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// The loopback redirect: a listener on 127.0.0.1 that waits for the
// browser to bring back the code with the state the flow sent.

// callback is the loopback server the browser is redirected to.
type callback struct {
	srv    *http.Server
	served chan struct{} // closed when Serve returned
	result chan callbackResult
	once   sync.Once
}

type callbackResult struct {
	code string
	err  error
}

func serveCallback(ln net.Listener, state string, d *discovery) *callback {
	cb := &callback{served: make(chan struct{}), result: make(chan callbackResult, 1)}
	var doneMu sync.Mutex
	done := false
	cb.srv = &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/callback" {
				http.NotFound(w, r)
				return
			}
			q := r.URL.Query()
			if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
				// Not the redirect of this flow (stale, or forged): ignore it.
				callbackPage(w, http.StatusBadRequest, "This is not the authorisation mcptrunk is waiting for.")
				return
			}
			doneMu.Lock()
			already := done
			done = true
			doneMu.Unlock()
			if already {
				callbackPage(w, http.StatusOK, "mcptrunk has already received this authorisation. You can close this window.")
				return
			}
			var res callbackResult
			res.code, res.err = authorizationResponse(q, d)
			if res.err != nil {
				callbackPage(w, http.StatusBadRequest, "Authorisation failed: "+res.err.Error())
			} else {
				callbackPage(w, http.StatusOK, "mcptrunk is authorised. You can close this window.")
			}
			cb.result <- res
		}),
	}
	go func() {
		defer close(cb.served)
		_ = cb.srv.Serve(ln)
	}()
	return cb
}

// authorizationResponse reads the redirect's query (its state already
// checked): the code, or why there is none (the server's refusal, a
// response from another issuer, RFC 9207).
func authorizationResponse(q url.Values, d *discovery) (string, error) {
	iss := q.Get("iss")
	switch {
	case q.Get("error") != "":
		msg := logkey.Clip(q.Get("error"))
		if desc := q.Get("error_description"); desc != "" {
			msg += " (" + logkey.Clip(desc) + ")"
		}
		return "", fmt.Errorf("the authorization server refused: %s", msg)
	case iss != "" && strings.TrimSuffix(iss, "/") != strings.TrimSuffix(d.issuer, "/"),
		iss == "" && d.meta.IssParameterSupported:
		return "", errors.New("the authorization response came from another issuer (iss); refusing it")
	case q.Get("code") == "":
		return "", errors.New("the authorization response holds no code")
	}
	return q.Get("code"), nil
}

func callbackPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>mcptrunk</title><p>%s</p>\n", html.EscapeString(msg))
}

// wait returns the code the redirect brought, or why there is none.
func (cb *callback) wait(ctx context.Context) (string, error) {
	select {
	case res := <-cb.result:
		return res.code, res.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", errors.New("timed out waiting for the authorization redirect")
		}
		return "", ctx.Err()
	}
}

// close stops the loopback server and waits for it.
func (cb *callback) close() {
	cb.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if cb.srv.Shutdown(ctx) != nil {
			_ = cb.srv.Close()
		}
		<-cb.served
	})
}
