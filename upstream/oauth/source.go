package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// AuthRequiredError says a remote server needs the user to authorise
// mcptrunk (again).
type AuthRequiredError struct {
	Server string // the server's id, as "mcptrunk auth" takes it
	Reason string // why, when there is more to say than that it asked

	bearer *challenge // the server's Bearer challenge, when it sent one
}

func (e *AuthRequiredError) Error() string {
	msg := "needs authorisation"
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg + fmt.Sprintf(": run \"mcptrunk auth %s\"", e.Server)
}

// refreshSkew is the most a token is refreshed ahead of its expiry.
const refreshSkew = 30 * time.Second

// keyLocks serialises refreshes of one stored token within the process, so
// that connections sharing it do not spend a rotating refresh token twice.
var keyLocks sync.Map // store key -> *sync.Mutex

// refusals remembers, per store key, why its tokens were last dropped, so
// that every request that finds them gone says the same.
var refusals sync.Map // store key -> string

func keyLock(key string) *sync.Mutex {
	v, _ := keyLocks.LoadOrStore(key, &sync.Mutex{})
	return v.(*sync.Mutex)
}

// Source is the OAuth side of one HTTP connection: it puts the stored token
// on each request and answers the server's 401s. NewSource returns nil for a
// server that does not use OAuth.
type Source struct {
	server string // the server's id
	key    string // the store key: the server's canonical URL
	store  *tokenStore
	logger *slog.Logger
	hc     *http.Client // for the token endpoint

	mu     sync.Mutex
	loaded bool
	rec    *tokenRecord // what is stored (nil: nothing)
	sent   []string     // access tokens this connection sent, scrubbed from messages
	bearer *challenge   // of the last 401, for the background flow
}

func NewSource(spec Server, name string, logger *slog.Logger, tr http.RoundTripper) *Source {
	if !spec.usesOAuth() {
		return nil
	}
	return &Source{
		server: name,
		key:    canonicalResource(spec.URL),
		store:  defaultTokenStore(),
		logger: logger,
		hc:     &http.Client{Transport: tr, CheckRedirect: noRedirects},
	}
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// current returns the stored token record, reading the store the first
// time.
func (a *Source) current() *tokenRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.loaded {
		a.loaded = true
		rec, err := a.store.load(a.key)
		if err != nil {
			a.logger.Warn("reading the stored OAuth token failed", logkey.Error, err)
		}
		a.rec = rec
	}
	return a.rec
}

func (a *Source) set(rec *tokenRecord) {
	a.mu.Lock()
	a.rec, a.loaded = rec, true
	a.mu.Unlock()
}

func (a *Source) noteSent(tok string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.sent {
		if t == tok {
			return
		}
	}
	if len(a.sent) >= 8 {
		a.sent = a.sent[1:]
	}
	a.sent = append(a.sent, tok)
}

// Scrub removes the tokens this connection sent from s (a server that
// echoes the Authorization header in an error must not put it in a log).
func (a *Source) Scrub(s string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.sent {
		s = strings.ReplaceAll(s, t, "[redacted]")
	}
	if a.rec != nil {
		for _, t := range []string{a.rec.AccessToken, a.rec.RefreshToken} {
			if len(t) >= 4 {
				s = strings.ReplaceAll(s, t, "[redacted]")
			}
		}
	}
	return s
}

// Apply puts the stored access token on req, refreshing it first when it
// is about to expire. It returns the token sent ("" when none is stored).
func (a *Source) Apply(req *http.Request) (string, error) {
	rec := a.current()
	if !rec.usable() {
		return "", nil
	}
	now := time.Now()
	if rec.needsRefresh(now) && rec.RefreshToken != "" {
		fresh, err := a.refresh(req.Context(), rec.AccessToken, false)
		switch {
		case err == nil:
			rec = fresh
		case errors.As(err, new(*AuthRequiredError)):
			return "", err
		case req.Context().Err() != nil:
			return "", req.Context().Err()
		case !now.Before(rec.Expiry):
			return "", fmt.Errorf("the access token expired and refreshing it failed: %w", err)
		default:
			a.logger.Debug("refreshing the access token ahead of its expiry failed; using it while it lasts", logkey.Error, err)
		}
	}
	req.Header.Set("Authorization", "Bearer "+rec.AccessToken)
	a.noteSent(rec.AccessToken)
	return rec.AccessToken, nil
}

// refresh replaces the access token stale: with one stored meanwhile (by
// another connection or process), else by the refresh grant. refused says
// the server refused stale (rather than it being about to expire). A
// refresh the authorization server refuses, or a refused token that cannot
// be refreshed, drops the tokens and returns an AuthRequiredError.
func (a *Source) refresh(ctx context.Context, stale string, refused bool) (*tokenRecord, error) {
	lock := keyLock(a.key)
	lock.Lock()
	defer lock.Unlock()
	cur, err := a.store.load(a.key)
	if err != nil {
		a.logger.Warn("reading the stored OAuth token failed", logkey.Error, err)
	}
	now := time.Now()
	if cur.usable() && cur.AccessToken != stale && !cur.needsRefresh(now) {
		a.set(cur)
		return cur, nil
	}
	switch {
	case !cur.usable():
		a.set(cur)
		return nil, a.authRequired("", nil)
	case cur.RefreshToken == "" && !refused:
		a.set(cur)
		return cur, nil // use it while it lasts
	case cur.RefreshToken == "":
		const reason = "the server refused the access token and there is no refresh token"
		a.drop(cur, reason)
		return nil, a.authRequired(reason, nil)
	}
	a.logger.Debug("refreshing the access token")
	ctx, cancel := context.WithTimeout(ctx, authHTTPTimeout)
	defer cancel()
	fresh, err := refreshGrant(ctx, a.hc, cur)
	if err != nil {
		if isPermanentTokenError(err) {
			reason := "refreshing the token was refused: " + tokenErrorCode(err)
			a.drop(cur, reason)
			return nil, a.authRequired(reason, nil)
		}
		return nil, err
	}
	if err := a.store.save(fresh); err != nil {
		a.logger.Warn("storing the refreshed OAuth token failed", logkey.Error, err)
	}
	refusals.Delete(a.key)
	a.set(fresh)
	a.logger.Debug("access token refreshed", "expires", fresh.Expiry)
	return fresh, nil
}

// drop removes the tokens of rec from the store (keeping the client
// registration for the next authorisation), for reason.
func (a *Source) drop(rec *tokenRecord, reason string) {
	refusals.Store(a.key, reason)
	if rec == nil {
		return
	}
	cleared := rec.withoutTokens()
	if err := a.store.save(cleared); err != nil {
		a.logger.Warn("removing the refused OAuth token failed", logkey.Error, err)
	}
	a.set(cleared)
}

// Rejected handles a 401 (its WWW-Authenticate values) to a request that carried sent ("" for none). It
// reports whether to send the request again (with a new token), or the
// error that ends it: an AuthRequiredError, or a transient failure. Neither
// (false, nil) means the 401 is not OAuth's: the caller reports the status.
// last is set when the request already went out a second time.
func (a *Source) Rejected(ctx context.Context, sent string, wwwAuthenticate []string, last bool) (bool, error) {
	bearer := bearerChallenge(parseChallenges(wwwAuthenticate))
	if bearer != nil {
		a.mu.Lock()
		a.bearer = bearer
		a.mu.Unlock()
	}
	if sent == "" {
		// Maybe a token was stored since this connection read the store.
		cur, _ := a.store.load(a.key)
		if cur.usable() && !last {
			a.set(cur)
			return true, nil
		}
		if bearer == nil && cur == nil {
			return false, nil
		}
		return false, a.authRequired("", bearer)
	}
	if last {
		// A token that was just refreshed (or stored) is refused too.
		const reason = "the server refused a fresh access token"
		a.drop(a.current(), reason)
		return false, a.authRequired(reason, bearer)
	}
	if _, err := a.refresh(ctx, sent, true); err != nil {
		var need *AuthRequiredError
		if errors.As(err, &need) {
			return false, err
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, fmt.Errorf("HTTP 401 Unauthorized: the server refused the access token and refreshing it failed: %w", err)
	}
	return true, nil
}

// authRequired builds the error for a server that needs authorisation. It
// carries the server's last Bearer challenge, so that a flow started for it
// (Authorize with Cause) need not ask for it again.
func (a *Source) authRequired(reason string, bearer *challenge) error {
	if reason == "" {
		// The tokens may have been dropped by another request: say why.
		if r, ok := refusals.Load(a.key); ok {
			reason, _ = r.(string)
		}
	}
	err := &AuthRequiredError{Server: a.server, Reason: reason}
	if bearer == nil {
		a.mu.Lock()
		bearer = a.bearer
		a.mu.Unlock()
	}
	err.bearer = bearer
	return err
}
