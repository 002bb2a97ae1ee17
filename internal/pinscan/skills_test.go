package pinscan

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// skillsServer declares the skills extension and lists one skill, pdf,
// whose SKILL.md has the digest *digest (a test changes it), over two
// pages.
func skillsServer(digest *string) *memserver.Server {
	return &memserver.Server{
		Capabilities: json.RawMessage(`{"tools":{},"extensions":{"io.modelcontextprotocol/skills":{}}}`),
		Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "skills/list" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
			}
			if !strings.Contains(string(params), "cursor") {
				return json.RawMessage(`{"skills":[],"nextCursor":"2"}`), nil
			}
			return json.RawMessage(`{"skills":[{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"fills forms"},` +
				`"resources":[{"uri":"skill://pdf/SKILL.md","digest":"` + *digest + `","size":10}]}]}`), nil
		},
	}
}

// mcptrunk pin records each skill a server lists (its URI, name and files'
// digests) beside its tools, and a skill whose digest changed is drift,
// printed as a changed skill.
func TestRunRecordsSkills(t *testing.T) {
	digest := "sha256:1111"
	set := memserver.Set{"a": skillsServer(&digest), "b": {}, "u": {}}
	lockPath := filepath.Join(t.TempDir(), "mcptrunk.lock.json")

	first := scan(t, set, lockPath, "a")
	r := result(t, first, "a")
	e, ok := r.Now[pin.Skills]["skill://pdf/SKILL.md"]
	if !ok || len(r.Changes) != 1 || r.Changes[0].Kind != pin.Skills || r.Changes[0].Status != pin.New {
		t.Fatalf("a: changes %+v, skills %+v; want the skill new", r.Changes, r.Now[pin.Skills])
	}
	for _, want := range []string{`"name":"pdf"`, `"uri":"skill://pdf/SKILL.md"`, `"digest":"sha256:1111"`} {
		if !strings.Contains(string(e.Definition), want) {
			t.Errorf("the skill's pinned definition %s lacks %s", e.Definition, want)
		}
	}
	if _, err := first.Record(lockPath); err != nil {
		t.Fatal(err)
	}
	lock, _ := pin.Read(lockPath)
	if lock.Servers["a"][pin.Skills]["skill://pdf/SKILL.md"].SHA256 != e.SHA256 {
		t.Errorf("the lockfile's skills of a: %+v", lock.Servers["a"][pin.Skills])
	}
	if again := scan(t, set, lockPath, "a"); len(result(t, again, "a").Changes) != 0 {
		t.Errorf("drift right after recording: %+v", result(t, again, "a").Changes)
	}

	digest = "sha256:2222"
	later := scan(t, set, lockPath, "a")
	if r := result(t, later, "a"); len(r.Changes) != 1 || r.Changes[0].Status != pin.Changed || r.Changes[0].Kind != pin.Skills {
		t.Errorf("after the skill's file changed: %+v; want the skill changed", r.Changes)
	}
	var out bytes.Buffer
	later.Print(&out)
	if !strings.Contains(out.String(), `changed skill "skill://pdf/SKILL.md"`) || !strings.Contains(out.String(), "2222") {
		t.Errorf("Print does not show the changed skill and its new digest:\n%s", out.String())
	}
}
