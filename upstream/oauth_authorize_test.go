package upstream

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// oauth.Authorize (the "mcptrunk auth" flow): discovery through the well-known
// URI when the 401 names no metadata, and the refusals.
func TestOAuthAuthorize(t *testing.T) {
	t.Run("well-known discovery", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		f.set(func() { f.noMetadataParam = true })
		env := setupOAuthEnv(t)
		spec := oauthSpec(t, "remote", f.mcpURL)
		res := authorizeDirectly(t, spec)
		if !res.Refreshable || res.Expiry.IsZero() || res.Scope != "mcp:tools" || filepath.Dir(res.File) != env.dir {
			t.Errorf("result %+v", res)
		}
		checkTokenFiles(t, env.dir)
	})
	t.Run("no PKCE", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		f.set(func() { f.noPKCEMetadata = true })
		setupOAuthEnv(t)
		_, err := oauth.Authorize(context.Background(), OAuthServer(oauthSpec(t, "remote", f.mcpURL)), oauth.AuthorizeOptions{
			Prompt: func(string) { t.Error("the flow went on without PKCE") },
		})
		if err == nil || !strings.Contains(err.Error(), "PKCE") {
			t.Fatalf("got %v, want a refusal naming PKCE", err)
		}
	})
	t.Run("wrong state is ignored, timeout", func(t *testing.T) {
		checkLeaks(t)
		f := newOAuthFixture(t)
		setupOAuthEnv(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := oauth.Authorize(ctx, OAuthServer(oauthSpec(t, "remote", f.mcpURL)), oauth.AuthorizeOptions{
			Prompt: func(u string) {
				pu, _ := url.Parse(u)
				redirect := pu.Query().Get("redirect_uri")
				resp, err := http.Get(redirect + "?code=forged&state=wrong")
				if err != nil {
					t.Errorf("forged redirect: %v", err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("forged redirect: %d, want 400", resp.StatusCode)
				}
				http.DefaultClient.CloseIdleConnections()
			},
		})
		if err == nil || !strings.Contains(err.Error(), "timed out waiting for the authorization redirect") {
			t.Fatalf("got %v, want a timeout", err)
		}
		if f.count("code") != 0 {
			t.Error("a forged code was exchanged")
		}
	})
	t.Run("not for static tokens or stdio", func(t *testing.T) {
		spec := remoteConfig(t, "remote", "http", "http://127.0.0.1:1/mcp", "")
		if _, err := oauth.Authorize(context.Background(), OAuthServer(spec), oauth.AuthorizeOptions{}); err == nil || !strings.Contains(err.Error(), "Authorization header") {
			t.Errorf("static token: %v", err)
		}
		if _, err := oauth.Authorize(context.Background(), OAuthServer(config.Spec{Name: "x", Type: config.TransportStdio, Command: "x"}), oauth.AuthorizeOptions{}); err == nil || !strings.Contains(err.Error(), "not a remote server") {
			t.Errorf("stdio: %v", err)
		}
	})
}

// "mcptrunk auth" for a server that does not use OAuth says so.
func TestOAuthAuthorizeServerWithoutOAuth(t *testing.T) {
	checkLeaks(t)
	setupOAuthEnv(t)
	r := startRemote(t, "http")
	_, err := oauth.Authorize(context.Background(), OAuthServer(oauthSpec(t, "plain", r.url)), oauth.AuthorizeOptions{
		Prompt: func(string) { t.Error("the flow went on") },
	})
	if err == nil || !strings.Contains(err.Error(), "does not seem to use OAuth") {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
	if n := r.rec.count(http.MethodDelete, ""); n != 1 {
		t.Errorf("the probe's session was not ended (%d DELETEs)", n)
	}
}
