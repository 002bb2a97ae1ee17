package hostcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var selfArgs = []string{"serve", "--config", "/cfg/mcptrunk.json"}

func location(t *testing.T, id string, scope Scope) Location {
	t.Helper()
	h, err := HostByID(id)
	if err != nil {
		t.Fatal(err)
	}
	return Location{Host: h, Path: "/x/" + id, Scope: scope}
}

// TestInstallRoundTrip: install changes only the servers member, keeps the
// entries named, and uninstall gives back the very bytes.
func TestInstallRoundTrip(t *testing.T) {
	cases := []struct {
		id, file string
		keep     []string
	}{
		{"claude-desktop", "{\n  \"globalShortcut\": \"\",\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\"\n    }\n  },\n  \"z\": [1, 2]\n}\n", []string{"b"}},
		{"claude-code", `{"numStartups":3,"mcpServers":{"a":{"type":"stdio","command":"a"}},"projects":{"/p":{"mcpServers":{}}}}`, nil},
		{"claude-code", "{\n\t\"tipsHistory\": {},\n\t\"userID\": \"u\"\n}", nil}, // no mcpServers yet
		{"cursor", "{}", nil},
		{"vscode", "{\n  // mine\n  \"inputs\": [],\n  \"servers\": {\n    \"p\": {\"command\": \"x\", \"env\": {\"K\": \"${input:k}\"}}, // keep me\n  },\n}\n", []string{"p"}},
		{"windsurf", "{\"mcpServers\": null}", nil},
		{"gemini", "{\n  // Gemini CLI\n  \"theme\": \"Dracula\",\n  \"mcpServers\": {\n    \"gh\": {\"command\": \"npx\", \"env\": {\"T\": \"$TOKEN\"}, \"trust\": true},\n    \"web\": {\"httpUrl\": \"https://g.example.com/mcp\", \"timeout\": 5000}\n  },\n  \"mcp\": {\"allowed\": [\"gh\"]}\n}\n", []string{"web"}},
		{"zed", "// settings\n{\n  \"theme\": \"x\", // trailing\n  \"context_servers\": {\n    /* ext */ \"e\": {\"source\": \"extension\", \"settings\": {}},\n  },\n  \"vim_mode\": true,\n}\n", []string{"e"}},
	}
	for _, c := range cases {
		loc := location(t, c.id, ScopeUser)
		out, err := InstallEdit(loc, []byte(c.file), SelfName, "/bin/mcptrunk", selfArgs, c.keep)
		if err != nil {
			t.Errorf("%s %q: %v", c.id, c.file, err)
			continue
		}
		servers, err := Read(loc, out, testEnv)
		if err != nil {
			t.Errorf("%s: the installed file does not read back: %v\n%s", c.id, err, out)
			continue
		}
		var names []string
		for _, s := range servers {
			names = append(names, s.Name)
		}
		if want := append([]string{SelfName}, c.keep...); strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("%s: servers %q, want %q\n%s", c.id, names, want, out)
		}
		if !servers[0].Self || servers[0].Command != "/bin/mcptrunk" {
			t.Errorf("%s: %+v", c.id, servers[0])
		}
		// Everything outside the servers member is as it was.
		p0, _ := plain(loc.Host, []byte(c.file))
		p1, _ := plain(loc.Host, out)
		var a, b map[string]json.RawMessage
		_ = json.Unmarshal(p0, &a)
		_ = json.Unmarshal(p1, &b)
		for k, v := range a {
			if k != loc.Host.Key && !bytes.Equal(v, b[k]) {
				t.Errorf("%s: member %q changed", c.id, k)
			}
		}
		if strings.Contains(c.file, "// mine") && !strings.Contains(string(out), "// mine") {
			t.Errorf("%s: a comment outside the servers was lost:\n%s", c.id, out)
		}
		u, err := UninstallEdit(loc, out, []byte(c.file))
		if err != nil || !u.Exact || string(u.Data) != c.file || u.Added != nil || u.Changed != nil {
			t.Errorf("%s: uninstall: %+v, %v\n got %q\nwant %q", c.id, u, err, u.Data, c.file)
		}
	}
}

// TestUninstallKeepsLaterChanges: settings the host changed after install
// stay; only the servers go back.
func TestUninstallKeepsLaterChanges(t *testing.T) {
	loc := location(t, "claude-code", ScopeUser)
	orig := "{\n  \"numStartups\": 1,\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}\n"
	installed, err := InstallEdit(loc, []byte(orig), SelfName, "/bin/mcptrunk", selfArgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	later := bytes.Replace(installed, []byte(`"numStartups": 1`), []byte(`"numStartups": 2`), 1)
	u, err := UninstallEdit(loc, later, []byte(orig))
	want := strings.Replace(orig, `"numStartups": 1`, `"numStartups": 2`, 1)
	if err != nil || u.Exact || string(u.Data) != want {
		t.Errorf("exact %v, %v\n got %s\nwant %s", u.Exact, err, u.Data, want)
	}
	// A backup without servers: they are removed again.
	orig = "{\n  \"numStartups\": 1\n}\n"
	installed, _ = InstallEdit(loc, []byte(orig), SelfName, "/bin/mcptrunk", selfArgs, nil)
	later = bytes.Replace(installed, []byte(`"numStartups": 1`), []byte(`"numStartups": 2`), 1)
	u, err = UninstallEdit(loc, later, []byte(orig))
	if err != nil || u.Exact || string(u.Data) != "{\n  \"numStartups\": 2\n}\n" {
		t.Errorf("exact %v, %v: %q", u.Exact, err, u.Data)
	}
}

func TestInstallRefuses(t *testing.T) {
	for _, file := range []string{`{"mcpServers": {`, `{"mcpServers": "x"}`, `not json`, `{"mcpServers": {"a": 1, "a": 2}}`} {
		_, err := InstallEdit(location(t, "claude-desktop", ScopeUser), []byte(file), SelfName, "/bin/mcptrunk", selfArgs, nil)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "/x/claude-desktop") {
			t.Errorf("%q: %v", file, err)
		}
	}
	if _, err := InstallEdit(location(t, "claude-code", ScopeLocal), []byte(`{}`), SelfName, "/bin/mcptrunk", selfArgs, nil); err == nil || !strings.Contains(err.Error(), "local-scope") {
		t.Errorf("local scope: %v", err)
	}
	if _, err := UninstallEdit(location(t, "zed", ScopeUser), []byte(`{"a": /* open`), []byte(`{}`)); err == nil {
		t.Error("uninstall over a file that does not parse: no error")
	}
}

func TestMergeServers(t *testing.T) {
	add := []Server{
		{Name: "n1", Entry: json.RawMessage(`{"command":"x","args":["a"]}`)},
		{Name: "refused", Problem: "p"},
		{Name: "n2", Entry: json.RawMessage(`{"type":"http","url":"https://e.example.com"}`)},
	}
	cases := map[string]string{
		"": "{\n  \"mcpServers\": {\n    \"n1\": {\n      \"command\": \"x\",\n      \"args\": [\n        \"a\"\n      ]\n    },\n    \"n2\": {\n      \"type\": \"http\",\n      \"url\": \"https://e.example.com\"\n    }\n  }\n}\n",
		"{\n  \"mcpServers\": {\n    \"old\": {\"command\": \"o\"}\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n": "{\n  \"mcpServers\": {\n    \"old\": {\"command\": \"o\"},\n    \"n1\": {\n      \"command\": \"x\",\n      \"args\": [\n        \"a\"\n      ]\n    },\n    \"n2\": {\n      \"type\": \"http\",\n      \"url\": \"https://e.example.com\"\n    }\n  },\n  \"trunk\": {\"concurrency\": 4}\n}\n",
		`{"mcpServers":{"old":{"command":"o"}}}`: `{"mcpServers":{"old":{"command":"o"},"n1":{"command":"x","args":["a"]},"n2":{"type":"http","url":"https://e.example.com"}}}`,
		"{\n  \"trunk\": {}\n}":                  "{\n  \"trunk\": {},\n  \"mcpServers\": {\n    \"n1\": {\n      \"command\": \"x\",\n      \"args\": [\n        \"a\"\n      ]\n    },\n    \"n2\": {\n      \"type\": \"http\",\n      \"url\": \"https://e.example.com\"\n    }\n  }\n}",
		"{\n  \"mcpServers\": {}\n}":             "{\n  \"mcpServers\": {\n    \"n1\": {\n      \"command\": \"x\",\n      \"args\": [\n        \"a\"\n      ]\n    },\n    \"n2\": {\n      \"type\": \"http\",\n      \"url\": \"https://e.example.com\"\n    }\n  }\n}",
	}
	for in, want := range cases {
		got, err := MergeServers([]byte(in), add)
		if err != nil || string(got) != want {
			t.Errorf("%q: %v\n got %s\nwant %s", in, err, got, want)
		}
	}
	names, err := ConfigServers([]byte(`{"mcpServers": {"a": {"command": "x"}, "b": {"url": "u"}}}`))
	if err != nil || len(names) != 2 || !SameEntry(names["a"], json.RawMessage(`{ "command" : "x" }`)) || SameEntry(names["a"], names["b"]) {
		t.Errorf("ConfigServers: %v, %v", names, err)
	}
}

// TestUninstallMerges: what the host's file gained while mcptrunk was
// installed stays after uninstall: servers added (even one running
// another mcptrunk), a kept server's new entry; the entry install added
// goes, and the servers install moved come back.
func TestUninstallMerges(t *testing.T) {
	cases := []struct {
		id, orig    string
		keep        []string
		edit        func(installed string) string // what the user did since
		want        string
		added, chgd string
	}{{
		id:   "claude-desktop",
		orig: "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\", \"headersHelper\": 1}\n  },\n  \"z\": 1\n}\n",
		keep: []string{"b"},
		edit: func(s string) string {
			s = strings.Replace(s, `"headersHelper": 1`, `"headersHelper": 2`, 1)
			return strings.Replace(s, "\n  },\n  \"z\": 1", ",\n    \"weather\": {\n      \"command\": \"w\"\n    },\n    \"work\": {\"command\": \"/opt/mcptrunk\"}\n  },\n  \"z\": 2", 1)
		},
		want:  "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\", \"headersHelper\": 2},\n    \"weather\": {\n      \"command\": \"w\"\n    },\n    \"work\": {\"command\": \"/opt/mcptrunk\"}\n  },\n  \"z\": 2\n}\n",
		added: "weather,work", chgd: "b",
	}, {
		id:   "claude-code",
		orig: "{\n  \"numStartups\": 1\n}\n",
		edit: func(s string) string {
			return strings.Replace(s, "\n  }\n}", ",\n    \"x\": {\"command\": \"x\"}\n  }\n}", 1)
		},
		want:  "{\n  \"numStartups\": 1,\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\"}\n  }\n}\n",
		added: "x",
	}, {
		id:    "cursor",
		orig:  `{"mcpServers":{"a":{"command":"a"}}}`,
		edit:  func(s string) string { return strings.Replace(s, `]}`, `]},"n":{"command":"n"}`, 1) },
		want:  `{"mcpServers":{"a":{"command":"a"},"n":{"command":"n"}}}`,
		added: "n",
	}, {
		id:    "windsurf",
		orig:  `{"mcpServers": null}`,
		edit:  func(s string) string { return strings.Replace(s, `]}`, `]},"n":{"command":"n"}`, 1) },
		want:  `{"mcpServers": {"n":{"command":"n"}}}`,
		added: "n",
	}, {
		id:   "zed",
		orig: "{\n  \"context_servers\": {\n    \"e\": {\"source\": \"extension\"}, // mine\n  },\n}\n",
		keep: []string{"e"},
		edit: func(s string) string {
			return strings.Replace(s, "\n  },\n}", ",\n    \"n\": {\"command\": \"n\"}\n  },\n}", 1)
		},
		want:  "{\n  \"context_servers\": {\n    \"e\": {\"source\": \"extension\"},\n    \"n\": {\"command\": \"n\"}, // mine\n  },\n}\n",
		added: "n",
	}}
	for _, c := range cases {
		loc := location(t, c.id, ScopeUser)
		installed, err := InstallEdit(loc, []byte(c.orig), SelfName, "/bin/mcptrunk", selfArgs, c.keep)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		current := c.edit(string(installed))
		if current == string(installed) {
			t.Fatalf("%s: the edit changed nothing in\n%s", c.id, installed)
		}
		u, err := UninstallEdit(loc, []byte(current), []byte(c.orig))
		if err != nil || u.Exact || string(u.Data) != c.want || strings.Join(u.Added, ",") != c.added || strings.Join(u.Changed, ",") != c.chgd {
			t.Errorf("%s: %v: added %q, changed %q\n got %q\nwant %q\nfrom %q", c.id, err, u.Added, u.Changed, u.Data, c.want, current)
		}
	}
}
