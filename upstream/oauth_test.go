package upstream

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// A server that answers 401 needs authorisation; a long-running trunk
// (restart policy) starts the flow in the background: it logs the URL and
// opens the browser, the user "visits" it, the redirect reaches the
// loopback listener, the code is exchanged with the PKCE verifier, the
// tokens are stored, and the server comes up with its tools.
func TestOAuthFirstAuthorisation(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixture(t)
	env := setupOAuthEnv(t)
	h := newOAuthHost(t, true)
	defer h.close(t)
	ctx := context.Background()
	spec := oauthSpec(t, "remote", f.mcpURL)

	startErr := h.StartAll(ctx, []config.Spec{spec})
	const hint = `needs authorisation: run "mcptrunk auth remote"`
	if startErr == nil || !strings.Contains(startErr.Error(), `server "remote"`) || !strings.Contains(startErr.Error(), hint) {
		t.Fatalf("StartAll: got %v, want an error saying %s", startErr, hint)
	}
	t.Logf("at start: %v", startErr)
	c, _ := h.Client("remote")
	if st := c.Status(); !strings.Contains(st.Error, hint) {
		t.Errorf("status %s: error %q, want it to say %s", st.State, st.Error, hint)
	}
	if _, err := callTool(ctx, c, "echo", map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), hint) {
		t.Errorf("a call: got %v, want %s", err, hint)
	}

	authURL := loggedAuthURL(t, h.logs, 0)
	if opens := env.browserOpens(); len(opens) != 1 || opens[0] != authURL {
		t.Errorf("the browser was asked to open %q, want the logged URL once", opens)
	}
	before := h.changed()
	visit(t, authURL)

	waitFor(t, "the server to come up", 10*time.Second, func() bool {
		st, _ := c.State()
		return st == StateReady && len(c.Catalog().Tools) == 4
	})
	if h.changed() <= before {
		t.Error("no change was reported when the server came up")
	}
	raw, err := callTool(ctx, c, "echo", map[string]any{"text": "authorised"})
	if err != nil || toolText(t, raw) != "echo: authorised" {
		t.Fatalf("a call after authorising: %s, %v", raw, err)
	}
	if f.count("register") != 1 || f.count("code") != 1 {
		t.Errorf("registrations %d, code exchanges %d; want 1 and 1", f.count("register"), f.count("code"))
	}

	data := checkTokenFiles(t, env.dir)
	rec := storedRecord(t, spec)
	if !rec.usable() || rec.RefreshToken == "" || rec.ClientID == "" || rec.Resource != f.resource || rec.Issuer != f.issuer {
		t.Errorf("stored record lacks something: client %q, resource %q, issuer %q", rec.ClientID, rec.Resource, rec.Issuer)
	}
	if !strings.Contains(data, rec.AccessToken) {
		t.Error("the token file does not hold the access token")
	}

	h.close(t)
	f.checkNoSecrets("the log", h.logs.String())
	f.checkNoSecrets("the start error", startErr.Error())
}

// An access token that expires is refreshed before it is used; one the
// server refuses is refreshed and the request sent again. The caller sees
// neither.
func TestOAuthRefresh(t *testing.T) {
	t.Run("before expiry", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		f.set(func() { f.ttl = time.Second })
		setupOAuthEnv(t)
		spec := oauthSpec(t, "remote", f.mcpURL)
		authorizeDirectly(t, spec)
		first := storedRecord(t, spec)

		h := newOAuthHost(t, false)
		defer h.close(t)
		ctx := context.Background()
		c := h.startOne(t, spec)
		time.Sleep(1100 * time.Millisecond) // the access token has expired
		refreshes, rejected := f.count("refresh"), f.count("401")
		raw, err := callTool(ctx, c, "echo", map[string]any{"text": "later"})
		if err != nil || toolText(t, raw) != "echo: later" {
			t.Fatalf("a call after expiry: %s, %v", raw, err)
		}
		if f.count("refresh") <= refreshes {
			t.Error("the token was not refreshed")
		}
		if f.count("401") != rejected {
			t.Error("the expired token was sent (and refused) instead of being refreshed first")
		}
		now := storedRecord(t, spec)
		if now.AccessToken == first.AccessToken || now.RefreshToken == first.RefreshToken {
			t.Error("the store does not hold the refreshed (and rotated) tokens")
		}
		h.close(t)
		f.checkNoSecrets("the log", h.logs.String())
	})
	t.Run("on 401", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		setupOAuthEnv(t)
		spec := oauthSpec(t, "remote", f.mcpURL)
		authorizeDirectly(t, spec)

		h := newOAuthHost(t, false)
		defer h.close(t)
		ctx := context.Background()
		c := h.startOne(t, spec)
		f.revokeAccess() // the refresh token stays good
		raw, err := callTool(ctx, c, "echo", map[string]any{"text": "again"})
		if err != nil || toolText(t, raw) != "echo: again" {
			t.Fatalf("a call with a revoked access token: %s, %v", raw, err)
		}
		if f.count("refresh") != 1 || f.count("401") < 1 {
			t.Errorf("refreshes %d, 401s %d; want 1 refresh after a 401", f.count("refresh"), f.count("401"))
		}
		if st, _ := c.State(); st != StateReady {
			t.Errorf("state %s, want ready", st)
		}
		h.close(t)
		f.checkNoSecrets("the log", h.logs.String())
	})
}

// A revoked grant: the refresh is refused, the tokens are dropped, the call
// and the server's state say it needs authorisation with the command to
// run. A long-running trunk starts the flow again, and after it the server
// is back.
func TestOAuthRevoked(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "one-shot"
		if restart {
			name = "long-running"
		}
		t.Run(name, func(t *testing.T) {
			checkLeaks(t)
			f := newOAuthFixture(t)
			env := setupOAuthEnv(t)
			spec := oauthSpec(t, "remote", f.mcpURL)
			authorizeDirectly(t, spec)

			h := newOAuthHost(t, restart)
			defer h.close(t)
			ctx := context.Background()
			c := h.startOne(t, spec)
			f.revokeAll()

			const hint = `needs authorisation (refreshing the token was refused: invalid_grant): run "mcptrunk auth remote"`
			_, err := callTool(ctx, c, "echo", map[string]any{"text": "x"})
			if err == nil || !strings.Contains(err.Error(), hint) || !strings.Contains(err.Error(), `server "remote"`) {
				t.Fatalf("a call after revocation: got %v, want it to say %s", err, hint)
			}
			t.Logf("the call: %v", err)
			if f.count("refused refresh_token") != 1 {
				t.Errorf("refused refreshes: %d, want 1", f.count("refused refresh_token"))
			}
			waitFor(t, "the state to say so", 5*time.Second, func() bool {
				st, stErr := c.State()
				return st != StateReady && stErr != nil && strings.Contains(stErr.Error(), `run "mcptrunk auth remote"`)
			})
			st, stErr := c.State()
			t.Logf("state %s: %v", st, stErr)
			if rec := storedRecord(t, spec); rec.usable() || rec.RefreshToken != "" || rec.ClientID == "" {
				t.Errorf("after revocation the store should keep the registration only (usable %v)", rec.usable())
			}
			if !restart {
				if len(env.browserOpens()) != 0 {
					t.Error("a one-shot host opened the browser")
				}
				if strings.Contains(h.logs.String(), "open this URL") {
					t.Error("a one-shot host started the authorisation flow")
				}
			} else {
				visit(t, loggedAuthURL(t, h.logs, 0))
				waitFor(t, "the server to come back", 10*time.Second, func() bool {
					st, _ := c.State()
					return st == StateReady && len(c.Catalog().Tools) == 4
				})
				if _, err := callTool(ctx, c, "echo", map[string]any{"text": "x"}); err != nil {
					t.Errorf("a call after authorising again: %v", err)
				}
				if f.count("register") != 1 {
					t.Errorf("registrations %d: the stored registration should have been used again", f.count("register"))
				}
			}
			h.close(t)
			f.checkNoSecrets("the log", h.logs.String())
			f.checkNoSecrets("the call's error", err.Error())
			f.checkNoSecrets("the state", stErr.Error())
		})
	}
}

// "mcptrunk auth" stored a token while a long-running trunk waited: the
// trunk notices it in the store and connects.
func TestOAuthTokenStoredElsewhere(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixture(t)
	setupOAuthEnv(t)
	t.Setenv(NoBrowserEnv, "1")
	spec := oauthSpec(t, "remote", f.mcpURL)
	h := newOAuthHost(t, true)
	defer h.close(t)
	if err := h.StartAll(context.Background(), []config.Spec{spec}); err == nil {
		t.Fatal("StartAll succeeded without a token")
	}
	loggedAuthURL(t, h.logs, 0) // the background flow waits
	authorizeDirectly(t, spec)  // as "mcptrunk auth remote" in another terminal
	c, _ := h.Client("remote")
	waitFor(t, "the server to come up", 10*time.Second, func() bool {
		st, _ := c.State()
		return st == StateReady
	})
	h.close(t)
	f.checkNoSecrets("the log", h.logs.String())
}

// A server with a static Authorization header never touches the store, and
// its 401 keeps the old message.
func TestOAuthNotUsedWithStaticHeader(t *testing.T) {
	if remoteConfig(t, "remote", "http", "http://127.0.0.1:1/mcp", "").UsesOAuth() {
		t.Error("OAuth applies to a server with an Authorization header")
	}
}

func TestOAuthSSE(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixtureOf(t, "sse")
	env := setupOAuthEnv(t)
	h := newOAuthHost(t, true)
	defer h.close(t)
	ctx := context.Background()
	c, err := func() (*Client, error) {
		spec := oauthSpec(t, "remote", f.mcpURL)
		spec.Type = config.TransportSSE
		err := h.StartAll(ctx, []config.Spec{spec})
		c, _ := h.Client("remote")
		return c, err
	}()
	if err == nil || !strings.Contains(err.Error(), `needs authorisation: run "mcptrunk auth remote"`) {
		t.Fatalf("StartAll: %v", err)
	}
	visit(t, loggedAuthURL(t, h.logs, 0))
	waitFor(t, "the server to come up", 10*time.Second, func() bool {
		st, _ := c.State()
		return st == StateReady && len(c.Catalog().Tools) == 4
	})
	raw, err := callTool(ctx, c, "echo", map[string]any{"text": "sse"})
	if err != nil || toolText(t, raw) != "echo: sse" {
		t.Fatalf("a call: %s, %v", raw, err)
	}
	checkTokenFiles(t, env.dir)
	h.close(t)
	f.checkNoSecrets("the log", h.logs.String())
}

// A server that echoes the Authorization header in an error: the token is
// redacted from the error and the log.
func TestOAuthTokenNotEchoed(t *testing.T) {
	checkLeaks(t)
	f := newOAuthFixture(t)
	setupOAuthEnv(t)
	spec := oauthSpec(t, "remote", f.mcpURL)
	authorizeDirectly(t, spec)
	h := newOAuthHost(t, false)
	defer h.close(t)
	ctx := context.Background()
	c := h.startOne(t, spec)
	f.set(func() { f.echoStatus = http.StatusForbidden })
	_, err := callTool(ctx, c, "echo", map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("got %v, want the 403 with the token redacted", err)
	}
	h.close(t)
	f.checkNoSecrets("the error", err.Error())
	f.checkNoSecrets("the log", h.logs.String())
}
