package hydra

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// Server is a running Hydra and the test's login and consent app.
type Server struct {
	// Issuer is its issuer URL (the public port), as tokens' iss says.
	Issuer string
	// Admin is its admin API's URL.
	Admin string
	// Out is what it printed.
	Out *testkit.Buffer

	users map[string]map[string]any
}

// Start runs Hydra until the test ends: JWT access tokens (typ "JWT", as
// Hydra types them), each user's claims (users: subject -> claims, such
// as {"groups": ["admin"]}) put at the top level of the tokens it is
// granted. It returns once Hydra is ready.
func Start(t testing.TB, ctx context.Context, users map[string]map[string]any) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Out: &testkit.Buffer{}, users: users}
	app := httptest.NewServer(s.loginAndConsent())
	t.Cleanup(app.Close)
	public, admin := freePort(t), freePort(t)
	s.Issuer, s.Admin = "http://"+public, "http://"+admin
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hydra.yml")
	// A database file, migrated first, not dsn "memory": once, under load,
	// Hydra answered invalid_grant to a code it had just issued, and an
	// in-memory SQLite, which lives only while some pooled connection holds
	// it open, is the likely cause (not proven).
	dsn := "sqlite://" + filepath.Join(dir, "hydra.sqlite") + "?_fk=true"
	if out, err := exec.Command(bin, "migrate", "sql", "up", "--yes", dsn).CombinedOutput(); err != nil {
		t.Fatalf("migrating hydra's database: %v\n%s", err, out)
	}
	pubHost, pubPort, _ := net.SplitHostPort(public)
	admHost, admPort, _ := net.SplitHostPort(admin)
	// Claims other than the registered ones go to the top level of an
	// access token only when listed here; the test's are the users'.
	var claims []string
	for _, c := range users {
		for k := range c {
			if q := strconv.Quote(k); !slices.Contains(claims, q) {
				claims = append(claims, q)
			}
		}
	}
	yml := fmt.Sprintf(`dsn: %q
serve:
  public: {host: %s, port: %s}
  admin: {host: %s, port: %s}
urls:
  self: {issuer: %q}
  login: %q
  consent: %q
secrets:
  system: ["a-test-secret-that-is-long-enough-32"]
strategies:
  access_token: jwt
oauth2:
  allowed_top_level_claims: [%s]
  mirror_top_level_claims: false
log:
  level: warn
`, dsn, pubHost, pubPort, admHost, admPort, s.Issuer, app.URL+"/login", app.URL+"/consent", strings.Join(claims, ", "))
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out", "--config", cfg)
	cmd.Stdout, cmd.Stderr = s.Out, s.Out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting hydra: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	if err := s.waitReady(ctx, exited); err != nil {
		t.Fatalf("%v\n%s", err, s.Out)
	}
	return s
}

// waitReady polls the admin API's readiness endpoint, the event Hydra
// offers for it, until it answers 200.
func (s *Server) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := http.Get(s.Admin + "/health/ready"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("hydra exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("hydra was not ready within a minute")
		case <-tick.C:
		}
	}
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
