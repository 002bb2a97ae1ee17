package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

// check says of each server whose credential its calls carry, and lists a
// server with exchanged per-user tokens as serve does: with the trunk's own
// client token for the server's audience, never a user's.
func TestCheckSaysWhoseCredential(t *testing.T) {
	iss := testissuer.New(t)
	iss.AddClient("trunk", "trunk-client-secret-0123456789")
	who := testkit.StartWhoami(t, iss.URL, "https://whoami.test")
	t.Setenv("MCPTRUNK_TEST_TRUNK_SECRET", "trunk-client-secret-0123456789")
	t.Setenv("MCPTRUNK_TEST_ALICE_NOTES", "alice-notes-secret")
	notes := notesServer()
	notes["credentials"] = map[string]any{"mode": "static", "users": map[string]any{"alice": map[string]any{"env": map[string]any{"NOTES_TOKEN": "${MCPTRUNK_TEST_ALICE_NOTES}"}}}}
	cfg := writeConfig(t, map[string]server{
		"shared": notesServer(),
		"notes":  notes,
		"who": {"url": who.URL, "credentials": map[string]any{"mode": "exchange", "issuer": iss.URL, "audience": "https://whoami.test",
			"clientId": "trunk", "clientSecret": "${MCPTRUNK_TEST_TRUNK_SECRET}"}},
	}, nil)
	out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	if code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"credentials:\n",
		"  notes   per-user (static, 1 user in the config)\n",
		"  shared  shared\n",
		"  who     per-user (exchange at " + iss.URL + " for audience https://whoami.test)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errOut, "alice-notes-secret") || strings.Contains(out+errOut, "trunk-client-secret") {
		t.Error("check printed a secret")
	}
	seen := who.Seen()
	if len(seen) == 0 || seen[0].Subject != "trunk" || !seen[0].Accepted {
		t.Errorf("the exchange server was listed with %+v; want the trunk's own accepted client token", seen)
	}
}
