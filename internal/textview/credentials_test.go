package textview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
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
