package upstream

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
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

// clientOf returns the Client a transport's handler belongs to (nil for a
// transport made without one).
func clientOf(h jsonrpc.Handler) *Client {
	if ch, ok := h.(clientHandler); ok {
		return ch.c
	}
	return nil
}

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

// startBackgroundAuth starts the background flow unless it runs already or
// the Client belongs to a one-shot command. It never blocks.
func (c *Client) startBackgroundAuth(bearer *challenge) {
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
	var b *challenge
	if bearer != nil {
		cp := challenge{scheme: bearer.scheme, params: map[string]string{}}
		for k, v := range bearer.params {
			cp.params[k] = v
		}
		b = &cp
	}
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
		c.backgroundAuth(b, open)
	}()
}

// backgroundAuth runs the flow and watches the store until a token is
// stored, then connects the server again.
func (c *Client) backgroundAuth(bearer *challenge, open bool) {
	key := canonicalResource(c.spec.URL)
	store := defaultTokenStore()
	flowCtx, cancel := context.WithTimeout(c.life, backgroundAuthTimeout)
	flowDone := make(chan error, 1)
	go func() {
		hc := newAuthClient()
		defer hc.CloseIdleConnections()
		if bearer == nil {
			bearer, _ = probe(flowCtx, hc, c.spec, c.logger)
		}
		_, err := runFlow(flowCtx, hc, flowParams{
			spec: c.spec, server: c.id, bearer: bearer, logger: c.logger, openBrowser: open,
			prompt: func(authURL string) {
				c.logger.Warn(`server needs authorisation: open this URL in a browser (or run "mcptrunk auth `+c.id+`")`, "url", authURL)
			},
		})
		flowDone <- err
	}()
	pending := flowDone
	defer func() {
		cancel()
		if pending != nil {
			<-pending
		}
	}()
	tick := time.NewTicker(authStorePoll)
	defer tick.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case err := <-pending:
			pending = nil
			if err == nil {
				c.resumeAfterAuth()
				return
			}
			if c.life.Err() != nil {
				return
			}
			c.logger.Warn(`authorising the server did not complete; run "mcptrunk auth `+c.id+`"`, LogError, err)
		case <-tick.C:
			if rec, _ := store.load(key); rec.usable() {
				c.logger.Info("a token was stored for the server; connecting again")
				c.resumeAfterAuth()
				return
			}
		}
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
			if !sleepCtx(c.life, 50*time.Millisecond) {
				return
			}
		default: // ready, closed, disabled
			c.mu.Unlock()
			return
		}
	}
}
