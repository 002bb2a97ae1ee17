package catalog

import (
	"encoding/json"
	"strings"
	"testing"
)

// skillOf is a skill entry as a server sends it, with odd bytes to keep.
func skillOf(name string) string {
	return `{"uri":"skill://` + name + `/SKILL.md","frontmatter":{"name":"` + name + `","description":"does \u00e9"},` +
		`"resources":[{"uri":"skill://` + name + `/SKILL.md","digest":"sha256:` + strings.Repeat("a", 64) + `","size":12},` +
		`{"uri":"skill://` + name + `/scripts/run.py","size":3,"digest":"sha256:` + strings.Repeat("b", 64) + `"}],"x-vendor":[1, 2.50]}`
}

func TestNamespaceSkillResult(t *testing.T) {
	get := `{"skill":` + skillOf("pdf") + `,"ttlMs":1,"cacheScope":"public"}`
	res := NamespaceSkillResult("skills/get", "docs", json.RawMessage(get))
	if want := strings.ReplaceAll(get, "skill://pdf/", "skill://docs/pdf/"); string(res) != want {
		t.Errorf("skills/get:\n got %s\nwant %s", res, want)
	}
	dynamic := `{"skill":{"uri":"skill://live/SKILL.md","frontmatter":{"name":"live","description":"d"},"resources":"dynamic"},"ttlMs":0,"cacheScope":"private"}`
	if res := NamespaceSkillResult("skills/get", "docs", json.RawMessage(dynamic)); !strings.Contains(string(res), `"uri":"skill://docs/live/SKILL.md"`) || !strings.Contains(string(res), `"resources":"dynamic"`) {
		t.Errorf("a dynamic skill: %s", res)
	}
	dir := `{"resources":[{"uri":"skill://pdf/scripts/","name":"scripts","mimeType":"inode/directory"},{"uri":"file:///x","name":"x"}],"ttlMs":1,"cacheScope":"public"}`
	res = NamespaceSkillResult("resources/directory/read", "docs", json.RawMessage(dir))
	if want := `{"resources":[{"uri":"skill://docs/pdf/scripts/","name":"scripts","mimeType":"inode/directory"},{"uri":"mcptrunk://docs/file:///x","name":"x"}],"ttlMs":1,"cacheScope":"public"}`; string(res) != want {
		t.Errorf("resources/directory/read:\n got %s\nwant %s", res, want)
	}
	// What is not as the extension says passes as the server sent it.
	if odd := `{"ttlMs":1}`; string(NamespaceSkillResult("skills/get", "docs", json.RawMessage(odd))) != odd {
		t.Errorf("a skills/get result without a skill was changed")
	}
}
