package textview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/upstream"
)

func TestCredentials(t *testing.T) {
	var out bytes.Buffer
	Credentials(&out, []config.Spec{
		{Name: "gh", Credentials: config.Credentials{Mode: config.CredentialsExchange, Issuer: "https://id.example.com", Audience: "https://gh.example.com", ClientSecret: "SECRET"}},
		{Name: "db", Credentials: config.Credentials{Mode: config.CredentialsStatic, Users: map[string]config.UserSecrets{"alice": {Env: map[string]string{"T": "SECRET"}}}}},
		{Name: "cal", Credentials: config.Credentials{Mode: config.CredentialsOAuth, ClientID: "trunk", ClientSecret: "SECRET"}},
		{Name: "notes"},
	})
	want := "credentials:\n" +
		"  gh     per-user (exchange at https://id.example.com for audience https://gh.example.com)\n" +
		"  db     per-user (static, 1 user in the config)\n" +
		"  cal    per-user (oauth sign-in, client trunk)\n" +
		"  notes  shared\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(out.String(), "SECRET") {
		t.Error("a secret was printed")
	}
}

func TestProtection(t *testing.T) {
	var out bytes.Buffer
	Protection(&out, []upstream.Status{{Server: "plain"}})
	if out.Len() != 0 {
		t.Errorf("servers without a cap or a breaker: printed %q, want nothing", out.String())
	}
	retry := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	Protection(&out, []upstream.Status{
		{Server: "plain"},
		{Server: "db", MaxInFlight: 2, InFlight: 2, Queued: 3},
		{Server: "api", Breaker: upstream.BreakerOpen, FailuresInRow: 3, BreakerRetryAt: retry, BreakerOpened: 1},
		{Server: "search", MaxInFlight: 4, Breaker: upstream.BreakerClosed},
	})
	want := "protection:\n" +
		"  db      maxInFlight 2: 2 in flight, 3 waiting\n" +
		"  api     breaker open after 3 calls in a row without an answer: calls fail at once until 15:04:05\n" +
		"  search  maxInFlight 4: 0 in flight, 0 waiting; breaker closed\n\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
