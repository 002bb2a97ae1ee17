package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken/testissuer"
	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
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

// A server whose callers sign in themselves (credentials mode "oauth") is
// listed by check with the trunk's own sign-in, the one mcptrunk auth
// stored; check says it is per-user, by OAuth sign-in.
func TestCheckListsAnOAuthSignInServerAsTheTrunk(t *testing.T) {
	iss := testissuer.New(t)
	who := testkit.StartWhoamiSignIn(t, iss.URL)
	t.Setenv(oauth.TokenDirEnv, t.TempDir())
	admin := iss.Browser(t, "trunk-admin")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := oauth.Authorize(ctx, oauth.Server{Name: "who", URL: who.URL}, oauth.AuthorizeOptions{Prompt: func(u string) {
		resp, err := admin.Get(u)
		if err != nil {
			t.Error(err)
			return
		}
		_ = resp.Body.Close()
	}}); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]server{"who": {"url": who.URL, "credentials": map[string]any{"mode": "oauth"}}},
		map[string]any{"http": map[string]any{"auth": map[string]any{"issuer": iss.URL, "resource": "http://127.0.0.1:1/mcp"}}})
	out, errOut, code := runCLI(t, 60*time.Second, "check", "--config", cfg)
	if code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	if want := "  who  per-user (oauth sign-in, dynamic client registration)\n"; !strings.Contains(out, want) {
		t.Errorf("check's output lacks %q:\n%s", want, out)
	}
	seen := who.Seen()
	if len(seen) == 0 || seen[0].Subject != "trunk-admin" || !seen[0].Accepted {
		t.Errorf("the server was listed with %+v; want the trunk's own sign-in", seen)
	}
}
