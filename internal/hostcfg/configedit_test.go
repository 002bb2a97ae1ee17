package hostcfg

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoveServer: the server leaves mcpServers and every other byte of
// the file stays, wherever the server was; a name the config lacks is
// refused naming those it has.
func TestRemoveServer(t *testing.T) {
	const file = "{\n  \"$comment\": \"mine\",\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\"\n    },\n    \"c\": {\"url\": \"https://c.example.com/mcp\"}\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n"
	for _, c := range []struct{ name, in, want string }{
		{"a", file, "{\n  \"$comment\": \"mine\",\n  \"mcpServers\": {\n    \"b\": {\n      \"command\": \"b\"\n    },\n    \"c\": {\"url\": \"https://c.example.com/mcp\"}\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n"},
		{"b", file, "{\n  \"$comment\": \"mine\",\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"c\": {\"url\": \"https://c.example.com/mcp\"}\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n"},
		{"c", file, "{\n  \"$comment\": \"mine\",\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\"\n    }\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n"},
		{"only", `{"mcpServers": {"only": {"command": "x"}}}`, `{"mcpServers": {}}`},
	} {
		out, err := RemoveServer([]byte(c.in), c.name)
		if err != nil {
			t.Errorf("remove %s: %v", c.name, err)
			continue
		}
		if string(out) != c.want {
			t.Errorf("remove %s:\n%s\nwant:\n%s", c.name, out, c.want)
		}
		if err := ValidateConfig(out, os.LookupEnv); err != nil {
			t.Errorf("remove %s: the result does not validate: %v", c.name, err)
		}
	}
	_, err := RemoveServer([]byte(file), "d")
	if err == nil || !strings.Contains(err.Error(), `no server named "d"`) || !strings.Contains(err.Error(), "a, b, c") {
		t.Errorf("remove d: %v", err)
	}
	if _, err := RemoveServer([]byte(`{"trunk": {}}`), "a"); err == nil || !strings.Contains(err.Error(), "has none") {
		t.Errorf("remove from a config without servers: %v", err)
	}
}

// TestLiteralSecrets: credentials written in the file are found by the
// names of the variables and headers that hold them; references, and
// values that are no credential, are not.
func TestLiteralSecrets(t *testing.T) {
	cfg := `{"mcpServers": {
	  "gh": {"command": "npx", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abc", "DEBUG": "1", "OPENAI_API_KEY": "${OPENAI_API_KEY}"}},
	  "web": {"url": "https://w.example.com/mcp", "headers": {"Authorization": "Bearer abc", "Accept-Language": "en"}},
	  "ref": {"url": "https://r.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
	  "o": {"url": "https://o.example.com/mcp", "oauth": {"clientId": "id", "clientSecret": "s3cret"}}
	}}`
	got := strings.Join(LiteralSecrets([]byte(cfg)), "; ")
	if want := "gh: env GITHUB_PERSONAL_ACCESS_TOKEN; o: oauth.clientSecret; web: header Authorization"; got != want {
		t.Errorf("LiteralSecrets = %q, want %q", got, want)
	}
}

// TestEditConfigProtectsSecrets: a config readable by others that gains a
// literal secret becomes readable by the user alone, and the report names
// the entry (never the value) and how to move it into the environment; one
// without a secret keeps its mode.
func TestEditConfigProtectsSecrets(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	orig := []byte(`{"mcpServers": {"a": {"command": "a"}}}`)
	if err := os.WriteFile(cfg, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cfg, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := AddPlan(cfg, orig, []Server{{Name: "b", Entry: []byte(`{"command": "b"}`)}}).WriteConfig(&out); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o644 {
		t.Errorf("without a secret the mode changed: %#o", st.Mode().Perm())
	}
	data, _ := os.ReadFile(cfg)
	out.Reset()
	plan := AddPlan(cfg, data, []Server{{Name: "gh", Entry: []byte(`{"command": "gh", "env": {"GH_TOKEN": "ghp_literal"}}`)}})
	if err := plan.WriteConfig(&out); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Errorf("with a secret the mode is %#o, want 0600", st.Mode().Perm())
	}
	for _, want := range []string{"now readable by you only", "gh: env GH_TOKEN", `"NAME": "${NAME}"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "ghp_literal") {
		t.Errorf("the report shows the secret:\n%s", out.String())
	}
}
