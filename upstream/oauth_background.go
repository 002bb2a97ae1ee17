package upstream

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// The background flow of a long-running trunk. When a server needs
// authorisation and the Client restarts servers (serve; one-shot commands
// never do), the Client:
//
//   - runs the authorization code flow once at a time: the authorization
//     URL goes to the log (stderr), the browser is opened the first time
//     (not with MCPTRUNK_NO_BROWSER set), and the redirect is awaited on
//     127.0.0.1 for up to backgroundAuthTimeout;
//   - meanwhile watches the token store, so that "mcptrunk auth <server>"
//     run in a terminal serves as well;
//   - once a token is stored, connects again: a server its supervisor gave
//     up on gets a new supervisor (the restart machinery of supervise.go),
//     one that is still being restarted picks the token up at its next
//     attempt. Its tools then appear as for any server that comes up (the
//     Trunk announces list_changed).
//
// Everything runs as a worker of the Client, so Close ends and waits for it.

// NoBrowserEnv, when set, stops the trunk from opening a browser for the
// authorisation URL (it is still logged).
const NoBrowserEnv = "MCPTRUNK_NO_BROWSER"

// Variables for tests.
var (
	// backgroundAuthTimeout bounds the wait for the browser's redirect.
	backgroundAuthTimeout = 15 * time.Minute
	// authStorePoll is how often a server that needs authorisation checks
	// the token store for a token stored by another process.
	authStorePoll = 2 * time.Second
)

// clientAuthState is a Client's background authorisation state.
type clientAuthState struct {
	mu            sync.Mutex
	running       bool // a background flow runs
	browserOpened bool // the browser was opened once already
}

var clientAuths sync.Map // *Client -> *clientAuthState, until the Client closes

func (c *Client) authState() *clientAuthState {
	v, loaded := clientAuths.LoadOrStore(c, &clientAuthState{})
	if !loaded {
		context.AfterFunc(c.life, func() { clientAuths.Delete(c) })
	}
	return v.(*clientAuthState)
}

// authorizeIfNeeded starts the background flow when err, or the failure of
// the connection it came from, says that the server needs authorisation.
func (c *Client) authorizeIfNeeded(err error) {
	var need *oauth.AuthRequiredError
	if !errors.As(err, &need) {
		c.mu.Lock()
		t := c.t
		c.mu.Unlock()
		if t == nil || !errors.As(t.Err(), &need) {
			return
		}
	}
	c.startBackgroundAuth(need)
}

// startBackgroundAuth starts the background flow for need unless it runs
// already or the Client belongs to a one-shot command. It never blocks.
func (c *Client) startBackgroundAuth(need *oauth.AuthRequiredError) {
	if c.opts.restart.MaxAttempts <= 0 || c.life.Err() != nil {
		return
	}
	st := c.authState()
	st.mu.Lock()
	if st.running {
		st.mu.Unlock()
		return
	}
	st.running = true
	open := !st.browserOpened && os.Getenv(NoBrowserEnv) == ""
	if open {
		st.browserOpened = true
	}
	st.mu.Unlock()
	stopped := func() {
		st.mu.Lock()
		st.running = false
		st.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateClosed {
		stopped()
		return
	}
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		defer stopped()
		c.backgroundAuth(need, open)
	}()
}

// backgroundAuth runs the flow and watches the store until a token is
// stored (oauth.AwaitToken), then connects the server again.
func (c *Client) backgroundAuth(need *oauth.AuthRequiredError, open bool) {
	opts := oauth.AuthorizeOptions{Logger: c.opts.logger, Cause: need, OpenBrowser: open,
		Prompt: func(authURL string) {
			c.logger.Warn(`server needs authorisation: open this URL in a browser (or run "mcptrunk auth `+c.id+`")`, "url", authURL)
		}}
	stored := oauth.AwaitToken(c.life, OAuthServer(c.spec), opts, backgroundAuthTimeout, authStorePoll, func(err error) {
		c.logger.Warn(`authorising the server did not complete; run "mcptrunk auth `+c.id+`"`, logkey.Error, err)
	})
	if stored {
		c.logger.Info("a token is stored for the server; connecting again")
		c.resumeAfterAuth()
	}
}

// resumeAfterAuth connects the server again now that a token is stored.
func (c *Client) resumeAfterAuth() {
	for {
		c.mu.Lock()
		switch c.state {
		case StateFailed:
			// The supervisor gave up: start a new one, with a first attempt
			// now.
			c.workers.Add(1)
			go func() { c.supervise(c.attempt(c.life), nil) }()
			c.mu.Unlock()
			return
		case StateStarting, StateRestarting:
			// An attempt is under way or due; it reads the new token. Watch
			// until it has succeeded or the supervisor gave up.
			c.mu.Unlock()
			select {
			case <-c.life.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		default: // ready, closed, disabled
			c.mu.Unlock()
			return
		}
	}
}
