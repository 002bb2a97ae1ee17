package hostcfg

import (
	"strings"
	"testing"
)

// codexFile is a Codex config as its users write it: other settings
// before, between and after the servers, comments, a sub-table, every
// transport and the fields that map.
const codexFile = `# Codex settings
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-server-docs"]
cwd = "/srv/docs"
startup_timeout_sec = 20
tool_timeout_sec = 60
enabled_tools = ["search"]

[mcp_servers.docs.env]
API_KEY = "literal ${not expanded}"

# the design server, remote
[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Org" = "ORG_ID" }

[profiles.fast]
model = "gpt-5-mini"

[mcp_servers."old.one"]
command = "old"
enabled = false
disabled_tools = ["rm"]
env_vars = ["HOME"]
startup_timeout_ms = 1500
required = true

[mcp_servers.broken]
command = "x"
tool_timeout_sec = "soon"
`

func TestReadCodex(t *testing.T) {
	got := readHost(t, "codex", ScopeUser, codexFile)
	checkServers(t, "codex", got, map[string]want{
		"docs": {entry: `{"command":"npx","args":["-y","mcp-server-docs"],"env":{"API_KEY":"literal $${not expanded}"},"cwd":"/srv/docs",` +
			`"tools":{"allow":["search"]},"timeouts":{"connect":"20s","call":"60s"}}`},
		"figma": {entry: `{"type":"http","url":"https://mcp.figma.com/mcp","headers":{"Authorization":"Bearer ${FIGMA_OAUTH_TOKEN}","X-Figma-Region":"us-east-1","X-Org":"${ORG_ID}"}}`},
		"old.one": {entry: `{"command":"old","tools":{"deny":["rm"]},"timeouts":{"connect":"1500ms"},"disabled":true}`,
			notes: []string{`"env_vars"`, `"required" is not carried over`}},
		"broken": {problem: "tool_timeout_sec: want a positive number"},
	})
	var order []string
	servers, _ := Read(location(t, "codex", ScopeUser), []byte(codexFile), testEnv)
	for _, s := range servers {
		order = append(order, s.Name)
	}
	if strings.Join(order, ",") != "docs,figma,old.one,broken" {
		t.Errorf("servers in the order %q, want the file's", order)
	}
	if _, err := Read(location(t, "codex", ScopeUser), []byte("[mcp_servers.x\ncommand = 1"), testEnv); err == nil {
		t.Error("a file that does not parse was read")
	}
}

// TestCodexInstallRoundTrip: install replaces only the servers' tables
// (the kept one stays where it was), the result reads back with mcptrunk
// first, and uninstall gives back the very bytes.
func TestCodexInstallRoundTrip(t *testing.T) {
	loc := location(t, "codex", ScopeUser)
	for _, keep := range [][]string{nil, {"figma"}, {"docs", "figma", "old.one", "broken"}} {
		out, err := InstallEdit(loc, []byte(codexFile), SelfName, "/bin/mcptrunk", selfArgs, keep)
		if err != nil {
			t.Fatalf("keep %q: %v", keep, err)
		}
		servers, err := Read(loc, out, testEnv)
		if err != nil {
			t.Fatalf("keep %q: the installed file does not read back: %v\n%s", keep, err, out)
		}
		var names []string
		self := false
		for _, s := range servers {
			names = append(names, s.Name)
			self = self || s.Name == SelfName && s.Self && s.Command == "/bin/mcptrunk"
		}
		if !self || len(names) != len(keep)+1 {
			t.Errorf("keep %q: servers %q, want %s and the kept ones\n%s", keep, names, SelfName, out)
		}
		for _, line := range []string{"# Codex settings", `model = "gpt-5-codex"`, "[profiles.fast]", `model = "gpt-5-mini"`} {
			if !strings.Contains(string(out), line+"\n") {
				t.Errorf("keep %q: the installed file lost %q\n%s", keep, line, out)
			}
		}
		u, err := UninstallEdit(loc, out, []byte(codexFile))
		if err != nil {
			t.Fatal(err)
		}
		if !u.Exact || string(u.Data) != codexFile {
			t.Errorf("keep %q: uninstall did not give the file back:\n%s", keep, u.Data)
		}
	}
}

// TestCodexUninstallMerges: a server added to Codex's file while mcptrunk
// was installed stays, and so does a setting changed since.
func TestCodexUninstallMerges(t *testing.T) {
	loc := location(t, "codex", ScopeUser)
	out, err := InstallEdit(loc, []byte(codexFile), SelfName, "/bin/mcptrunk", selfArgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	later := strings.Replace(string(out), `model = "gpt-5-codex"`, `model = "gpt-6"`, 1) + "\n[mcp_servers.added]\ncommand = \"new\"\n"
	u, err := UninstallEdit(loc, []byte(later), []byte(codexFile))
	if err != nil {
		t.Fatal(err)
	}
	if u.Exact || strings.Join(u.Added, ",") != "added" {
		t.Errorf("exact %v, added %q", u.Exact, u.Added)
	}
	servers, err := Read(loc, u.Data, testEnv)
	if err != nil {
		t.Fatalf("%v\n%s", err, u.Data)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "docs,figma,old.one,broken,added" || !strings.Contains(string(u.Data), `model = "gpt-6"`) {
		t.Errorf("servers %q:\n%s", names, u.Data)
	}
}

// A server written inline cannot be moved as a table: install says so.
func TestCodexInstallRefusesInline(t *testing.T) {
	file := "mcp_servers = { inline = { command = \"x\" } }\n"
	_, err := InstallEdit(location(t, "codex", ScopeUser), []byte(file), SelfName, "/bin/mcptrunk", selfArgs, nil)
	if err == nil || !strings.Contains(err.Error(), `server "inline" is not written as a [mcp_servers.inline] table`) {
		t.Errorf("err = %v", err)
	}
}

func TestTOMLHeader(t *testing.T) {
	for line, want := range map[string]string{
		"[mcp_servers.docs]\n":               "mcp_servers|docs",
		`[ mcp_servers . "a.b" ] # c` + "\n": "mcp_servers|a.b",
		"[mcp_servers.'x y'.env]":            "mcp_servers|x y|env",
		"[[array.of]]":                       "array|of",
		`key = "[not a header]"`:             "",
		"[unterminated":                      "",
	} {
		path, ok := tomlHeader(line)
		if got := strings.Join(path, "|"); got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", line, got, ok, want)
		}
	}
}

// TestCodexCommentsStayWithTheirTable: a comment right above a table's
// header speaks of that table. Install keeps the comments over tables it
// leaves (a profile after a moved server), moves those over the servers it
// takes out, and uninstall gives the file back byte for byte.
func TestCodexCommentsStayWithTheirTable(t *testing.T) {
	loc := location(t, "codex", ScopeUser)
	file := "model = \"o3\"\n\n# a: the moved server\n[mcp_servers.a]\ncommand = \"a\"\n\n# the fast profile\n# (two lines)\n[profiles.fast]\nmodel = \"o4-mini\"\n"
	want := "model = \"o3\"\n\n[mcp_servers.trunk]\ncommand = \"/bin/mcptrunk\"\nargs = [\"serve\", \"--config\", \"/cfg/mcptrunk.json\"]\n\n# the fast profile\n# (two lines)\n[profiles.fast]\nmodel = \"o4-mini\"\n"
	out, err := InstallEdit(loc, []byte(file), SelfName, "/bin/mcptrunk", selfArgs, nil)
	if err != nil || string(out) != want {
		t.Fatalf("install: %v\n got %q\nwant %q", err, out, want)
	}
	u, err := UninstallEdit(loc, out, []byte(file))
	if err != nil || !u.Exact || string(u.Data) != file {
		t.Errorf("uninstall: exact %v, %v\n got %q\nwant %q", u.Exact, err, u.Data, file)
	}
}

// TestCodexUninstallPartsTables: the servers put back and one added since
// stay parted by a blank line, as the user wrote them.
func TestCodexUninstallPartsTables(t *testing.T) {
	loc := location(t, "codex", ScopeUser)
	orig := "model = \"o3\"\n\n[mcp_servers.a]\ncommand = \"a\"\n"
	installed, err := InstallEdit(loc, []byte(orig), SelfName, "/bin/mcptrunk", selfArgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	later := string(installed) + "\n[mcp_servers.b]\ncommand = \"b\"\n"
	u, err := UninstallEdit(loc, []byte(later), []byte(orig))
	want := orig + "\n[mcp_servers.b]\ncommand = \"b\"\n"
	if err != nil || string(u.Data) != want || strings.Join(u.Added, ",") != "b" {
		t.Errorf("%v, added %q\n got %q\nwant %q", err, u.Added, u.Data, want)
	}
}
