package hostcfg

import (
	"reflect"
	"strings"
	"testing"
)

// TestLocations pins every host's files on each OS.
func TestLocations(t *testing.T) {
	envs := map[string]Env{
		"linux": {GOOS: "linux", Home: "/home/u", Project: "/src/p", Getenv: func(string) string { return "" }},
		"linux-xdg": {GOOS: "linux", Home: "/home/u", Project: "/src/p", Getenv: func(k string) string {
			return map[string]string{"XDG_CONFIG_HOME": "/xdg", "CLAUDE_CONFIG_DIR": "/cc", "CODEX_HOME": "/codex-home"}[k]
		}},
		"darwin":            {GOOS: "darwin", Home: "/Users/u", Project: "/src/p"},
		"windows":           {GOOS: "windows", Home: `C:\Users\u`, Project: `C:\src\p`, Getenv: func(k string) string { return map[string]string{"APPDATA": `C:\Users\u\AppData\Roaming`}[k] }},
		"windows-noappdata": {GOOS: "windows", Home: `C:\Users\u`},
	}
	want := map[string]map[string][]string{
		"linux": {
			"claude-desktop": {"user /home/u/.config/Claude/claude_desktop_config.json"},
			"claude-code":    {"user /home/u/.claude.json", "local /home/u/.claude.json", "project /src/p/.mcp.json"},
			"cursor":         {"user /home/u/.cursor/mcp.json", "project /src/p/.cursor/mcp.json"},
			"vscode":         {"user /home/u/.config/Code/User/mcp.json", "project /src/p/.vscode/mcp.json"},
			"windsurf":       {"user /home/u/.codeium/windsurf/mcp_config.json"},
			"zed":            {"user /home/u/.config/zed/settings.json", "project /src/p/.zed/settings.json"},
			"gemini":         {"user /home/u/.gemini/settings.json", "project /src/p/.gemini/settings.json"},
			"codex":          {"user /home/u/.codex/config.toml"},
		},
		"linux-xdg": {
			"claude-desktop": {"user /xdg/Claude/claude_desktop_config.json"},
			"claude-code":    {"user /cc/.claude.json", "local /cc/.claude.json", "project /src/p/.mcp.json"},
			"cursor":         {"user /home/u/.cursor/mcp.json", "project /src/p/.cursor/mcp.json"},
			"vscode":         {"user /xdg/Code/User/mcp.json", "project /src/p/.vscode/mcp.json"},
			"windsurf":       {"user /home/u/.codeium/windsurf/mcp_config.json"},
			"zed":            {"user /xdg/zed/settings.json", "project /src/p/.zed/settings.json"},
			"gemini":         {"user /home/u/.gemini/settings.json", "project /src/p/.gemini/settings.json"},
			"codex":          {"user /codex-home/config.toml"},
		},
		"darwin": {
			"claude-desktop": {"user /Users/u/Library/Application Support/Claude/claude_desktop_config.json"},
			"claude-code":    {"user /Users/u/.claude.json", "local /Users/u/.claude.json", "project /src/p/.mcp.json"},
			"cursor":         {"user /Users/u/.cursor/mcp.json", "project /src/p/.cursor/mcp.json"},
			"vscode":         {"user /Users/u/Library/Application Support/Code/User/mcp.json", "project /src/p/.vscode/mcp.json"},
			"windsurf":       {"user /Users/u/.codeium/windsurf/mcp_config.json"},
			"zed":            {"user /Users/u/.config/zed/settings.json", "project /src/p/.zed/settings.json"},
			"gemini":         {"user /Users/u/.gemini/settings.json", "project /src/p/.gemini/settings.json"},
			"codex":          {"user /Users/u/.codex/config.toml"},
		},
		"windows": {
			"claude-desktop": {`user C:\Users\u\AppData\Roaming\Claude\claude_desktop_config.json`},
			"claude-code":    {`user C:\Users\u\.claude.json`, `local C:\Users\u\.claude.json`, `project C:\src\p\.mcp.json`},
			"cursor":         {`user C:\Users\u\.cursor\mcp.json`, `project C:\src\p\.cursor\mcp.json`},
			"vscode":         {`user C:\Users\u\AppData\Roaming\Code\User\mcp.json`, `project C:\src\p\.vscode\mcp.json`},
			"windsurf":       {`user C:\Users\u\.codeium\windsurf\mcp_config.json`},
			"zed":            {`user C:\Users\u\AppData\Roaming\Zed\settings.json`, `project C:\src\p\.zed\settings.json`},
			"gemini":         {`user C:\Users\u\.gemini\settings.json`, `project C:\src\p\.gemini\settings.json`},
			"codex":          {`user C:\Users\u\.codex\config.toml`},
		},
		"windows-noappdata": {
			"claude-desktop": {`user C:\Users\u\AppData\Roaming\Claude\claude_desktop_config.json`},
			"claude-code":    {`user C:\Users\u\.claude.json`},
			"cursor":         {`user C:\Users\u\.cursor\mcp.json`},
			"vscode":         {`user C:\Users\u\AppData\Roaming\Code\User\mcp.json`},
			"windsurf":       {`user C:\Users\u\.codeium\windsurf\mcp_config.json`},
			"zed":            {`user C:\Users\u\AppData\Roaming\Zed\settings.json`},
			"gemini":         {`user C:\Users\u\.gemini\settings.json`},
			"codex":          {`user C:\Users\u\.codex\config.toml`},
		},
	}
	for name, e := range envs {
		for _, h := range Hosts {
			var got []string
			for _, l := range Locations(h, e) {
				got = append(got, string(l.Scope)+" "+l.Path)
				if l.Host != h || (l.Scope != ScopeUser) != (l.Project != "") {
					t.Errorf("%s %s: %+v", name, h.ID, l)
				}
			}
			if w := want[name][h.ID]; !reflect.DeepEqual(got, w) {
				t.Errorf("%s %s:\n got %q\nwant %q", name, h.ID, got, w)
			}
		}
	}
}

func TestHostByIDAndGuess(t *testing.T) {
	for in, want := range map[string]string{"claude-desktop": "claude-desktop", "Claude_Desktop": "claude-desktop", "code": "vscode", "VSCode": "vscode", "zed": "zed", "wind": "windsurf"} {
		if h, err := HostByID(in); err != nil || h.ID != want {
			t.Errorf("HostByID(%q) = %v, %v", in, h, err)
		}
	}
	if _, err := HostByID("emacs"); err == nil {
		t.Error("emacs: no error")
	}
	// Two hosts start so: neither is guessed.
	if _, err := HostByID("claude"); err == nil || !strings.Contains(err.Error(), "claude-desktop (Claude Desktop) or claude-code (Claude Code)") {
		t.Errorf("claude: %v, want the candidates named", err)
	}
	for in, want := range map[string]string{
		"/a/Claude/claude_desktop_config.json": "claude-desktop", "/h/.claude.json": "claude-code", "/p/.mcp.json": "claude-code",
		"/h/.cursor/mcp.json": "cursor", `C:\x\Code\User\mcp.json`: "vscode", "/p/.vscode/mcp.json": "vscode",
		"/h/.codeium/windsurf/mcp_config.json": "windsurf", "/h/.config/zed/settings.json": "zed", "/x/servers.json": "",
	} {
		got := ""
		if h := GuessHost(in); h != nil {
			got = h.ID
		}
		if got != want {
			t.Errorf("GuessHost(%q) = %q, want %q", in, got, want)
		}
	}
}
