package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// oauthEnv points the token store at a fresh directory, shortens the
// background flow's polling, and replaces the browser with a recorder.
type oauthEnv struct {
	dir    string
	mu     sync.Mutex
	opened []string // URLs the "browser" was asked to open
}

func setupOAuthEnv(t *testing.T) *oauthEnv {
	t.Helper()
	e := &oauthEnv{dir: filepath.Join(t.TempDir(), "state", "tokens")}
	t.Setenv(oauth.TokenDirEnv, e.dir)
	t.Setenv(NoBrowserEnv, "")
	oldOpener, oldPoll := oauth.BrowserOpener, authStorePoll
	oauth.BrowserOpener = func(u string) {
		e.mu.Lock()
		e.opened = append(e.opened, u)
		e.mu.Unlock()
	}
	authStorePoll = 50 * time.Millisecond
	t.Cleanup(func() { oauth.BrowserOpener, authStorePoll = oldOpener, oldPoll })
	return e
}

func (e *oauthEnv) browserOpens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.opened...)
}

// visit plays the browser: it GETs the authorization URL and follows the
// redirect to the trunk's listener, which must say it is authorised.
func visit(t *testing.T, authURL string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatalf("visiting the authorization URL: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "authorised") {
		t.Fatalf("the redirect ended with %d: %s", resp.StatusCode, body)
	}
	if !strings.HasPrefix(resp.Request.URL.String(), "http://127.0.0.1:") {
		t.Errorf("the redirect went to %s, want the loopback listener", resp.Request.URL.Host)
	}
}

var loggedURL = regexp.MustCompile(`needs authorisation: open this URL[^\n]* url=("(?:[^"\\]|\\.)*"|\S+)`)

// loggedAuthURL waits for the background flow to log the authorization URL.
func loggedAuthURL(t *testing.T, logs *testkit.Buffer, skip int) string {
	t.Helper()
	var u string
	waitFor(t, "the authorization URL in the log", 10*time.Second, func() bool {
		m := loggedURL.FindAllStringSubmatch(logs.String(), -1)
		if len(m) <= skip {
			return false
		}
		u = m[skip][1]
		if strings.HasPrefix(u, `"`) {
			u, _ = strconv.Unquote(u)
		}
		return true
	})
	return u
}

// oauthHost is a Fleet logging at debug level into a buffer; restart says
// whether it restarts servers (like serve, which also authorises in the
// background) or not (like list, call and check).
type oauthHost struct {
	*Fleet
	logs *testkit.Buffer

	mu      sync.Mutex
	changes int
}

func newOAuthHost(t *testing.T, restart bool) *oauthHost {
	t.Helper()
	h := &oauthHost{logs: &testkit.Buffer{}}
	opts := &Options{
		Logger:  slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Version: "test",
		Events: Events{Changed: func(string) {
			h.mu.Lock()
			h.changes++
			h.mu.Unlock()
		}},
	}
	if restart {
		opts.Restart = RestartPolicy{MaxAttempts: 2, Backoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Stable: time.Minute}
	}
	h.Fleet = NewFleet(opts)
	return h
}

// startOne starts one server on the host, fails the test if it does not
// start, and returns its Client once its first discovery has settled.
func (h *oauthHost) startOne(t *testing.T, spec config.Spec) *Client {
	t.Helper()
	return startSettled(t, h.Fleet, spec)
}

func (h *oauthHost) changed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changes
}

func (h *oauthHost) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Errorf("closing the host: %v", err)
	}
}

// oauthSpec is a remote server as a user configures it for OAuth: a URL,
// nothing else.
func oauthSpec(t *testing.T, name, u string) config.Spec {
	t.Helper()
	c, err := config.Parse(strings.NewReader(fmt.Sprintf(`{"mcpServers": {%q: {"url": %q, "timeouts": {"connect": "5s", "list": "5s", "call": "10s"}}}}`, name, u)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return c.Servers[0]
}

// authorizeDirectly runs the flow the way "mcptrunk auth" does, visiting
// the printed URL.
func authorizeDirectly(t *testing.T, spec config.Spec) oauth.AuthResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := oauth.Authorize(ctx, OAuthServer(spec), oauth.AuthorizeOptions{Prompt: func(u string) { visit(t, u) }})
	if err != nil {
		t.Fatalf("oauth.Authorize: %v", err)
	}
	return res
}

// storedToken is the part of a token file the tests look at.
type storedToken struct {
	Issuer       string `json:"issuer"`
	Resource     string `json:"resource"`
	ClientID     string `json:"clientId"`
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
}

func (r *storedToken) usable() bool { return r != nil && r.AccessToken != "" }

// storedRecord reads the token file of spec's server (nil when none).
func storedRecord(t *testing.T, spec config.Spec) *storedToken {
	t.Helper()
	file, err := oauth.TokenFile(OAuthServer(spec))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var rec storedToken
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("token file: %v", err)
	}
	return &rec
}

// checkTokenFiles checks the token directory is 0700 and holds one file,
// 0600, and returns that file's content.
func checkTokenFiles(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("the token directory holds %d entries, want 1", len(entries))
	}
	data, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		return string(data)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("token directory mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(dir, entries[0].Name())); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	return string(data)
}
