package hostcfg

import "testing"

// TestReadGemini: every transport of a Gemini CLI settings.json as its
// users write it (other settings around, comments), its timeout, trust
// and tool filters, and its $VAR and ${VAR} references.
func TestReadGemini(t *testing.T) {
	got := readHost(t, "gemini", ScopeUser, `{
  // Gemini CLI's own settings stay where they are
  "theme": "Dracula",
  "mcp": {"allowed": ["gh"]},
  "mcpServers": {
    "gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "$TOKEN"},
           "cwd": "/srv/gh", "timeout": 30000, "trust": true, "includeTools": ["search_repositories", "get_file"], "excludeTools": ["delete_repo"]},
    "streamable": {"httpUrl": "https://g.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    "legacy": {"url": "https://g.example.com/sse"},
    "typed": {"url": "https://g.example.com/mcp", "type": "http"},
    "both": {"url": "https://a.example.com/sse", "httpUrl": "https://a.example.com/mcp"},
    "price": {"command": "x", "args": ["costs $5", "${not a var}"], "description": "shown in /mcp"},
    "badtimeout": {"command": "x", "timeout": "30s"},
    "cloud": {"httpUrl": "https://run.example.com/mcp", "authProviderType": "google_credentials"}
  }
}`)
	checkServers(t, "gemini", got, map[string]want{
		"gh": {entry: `{"command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${TOKEN}"},"cwd":"/srv/gh",` +
			`"tools":{"allow":["search_repositories","get_file"],"deny":["delete_repo"]},"timeouts":{"call":"30000ms"}}`,
			notes: []string{`"trust"`}},
		"streamable": {entry: `{"type":"http","url":"https://g.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`},
		"legacy":     {entry: `{"type":"sse","url":"https://g.example.com/sse"}`},
		"typed":      {entry: `{"type":"http","url":"https://g.example.com/mcp"}`},
		"both":       {problem: `both "url" and "httpUrl"`},
		"price":      {entry: `{"command":"x","args":["costs $5","$${not a var}"]}`},
		"badtimeout": {problem: "timeout: want a positive number of milliseconds"},
		"cloud":      {entry: `{"type":"http","url":"https://run.example.com/mcp"}`, notes: []string{`"authProviderType" is not carried over`}},
	})
}

// TestGeminiByName: the command line's spellings and the file's place.
func TestGeminiByName(t *testing.T) {
	for _, id := range []string{"gemini", "gemini-cli", "Gemini CLI", "gemini_cli"} {
		if h, err := HostByID(id); err != nil || h.ID != "gemini" {
			t.Errorf("HostByID(%q) = %v, %v", id, h, err)
		}
	}
	for _, p := range []string{"/home/u/.gemini/settings.json", `C:\Users\u\.gemini\settings.json`, "/src/p/.gemini/settings.json"} {
		if h := GuessHost(p); h == nil || h.ID != "gemini" {
			t.Errorf("GuessHost(%q) = %v", p, h)
		}
	}
}

// TestInstallAdvice: a Gemini CLI file whose mcp.allowed leaves the trunk
// out, or whose mcp.excluded names it, is said to keep it from starting.
func TestInstallAdvice(t *testing.T) {
	loc := location(t, "gemini", ScopeUser)
	cases := map[string]int{
		`{"mcpServers": {}}`:                                      0,
		`{"mcp": {"allowed": ["gh"]}, "mcpServers": {}}`:          1,
		`{"mcp": {"allowed": ["gh", "trunk"]}, "mcpServers": {}}`: 0,
		`{"mcp": {"excluded": ["trunk"]}, "mcpServers": {}}`:      1,
		`{"mcp": {"allowed": [], "excluded": ["trunk"]}}`:         2,
	}
	for file, n := range cases {
		if got := InstallAdvice(loc, []byte(file), "trunk"); len(got) != n {
			t.Errorf("%s: advice %q, want %d lines", file, got, n)
		}
	}
	if got := InstallAdvice(location(t, "cursor", ScopeUser), []byte(`{"mcp": {"allowed": []}}`), "trunk"); got != nil {
		t.Errorf("advice for another host: %q", got)
	}
}
