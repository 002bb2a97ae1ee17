package skills

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// skillOf is a skill entry as a server sends it, with odd bytes to keep.
func skillOf(name string) string {
	return `{"uri":"skill://` + name + `/SKILL.md","frontmatter":{"name":"` + name + `","description":"does \u00e9"},` +
		`"resources":[{"uri":"skill://` + name + `/SKILL.md","digest":"sha256:` + strings.Repeat("a", 64) + `","size":12},` +
		`{"uri":"skill://` + name + `/scripts/run.py","size":3,"digest":"sha256:` + strings.Repeat("b", 64) + `"}],"x-vendor":[1, 2.50]}`
}

// pages serves skills/list in pages of one skill each.
func pages(names ...string) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		var p struct{ Cursor string }
		_ = json.Unmarshal(params, &p)
		i := 0
		if p.Cursor != "" {
			i = int(p.Cursor[0] - '0')
		}
		next := ""
		if i+1 < len(names) {
			next = `,"nextCursor":"` + string(rune('0'+i+1)) + `"`
		}
		return json.RawMessage(`{"skills":[` + skillOf(names[i]) + `],"ttlMs":` + []string{"60000", "5000"}[i%2] + `,"cacheScope":"public"` + next + `}`), nil
	}
}

func TestList(t *testing.T) {
	servers := []Server{
		{Name: "broken", Call: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("boom")
		}},
		{Name: "docs", Call: pages("pdf", "xlsx")},
		{Name: "notes", Call: pages("journal")},
	}
	res, err := list(context.Background(), servers, func(server, uri, exported string, _ json.RawMessage) bool {
		return exported != "skill://docs/xlsx/SKILL.md"
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Skills     []json.RawMessage
		TTL        int64  `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatalf("%s: %v", res, err)
	}
	want := []string{
		strings.ReplaceAll(skillOf("pdf"), "skill://pdf/", "skill://docs/pdf/"),
		strings.ReplaceAll(skillOf("journal"), "skill://journal/", "skill://notes/journal/"),
	}
	if len(got.Skills) != len(want) {
		t.Fatalf("skills %s, want pdf of docs and journal of notes (broken left out, xlsx refused)", res)
	}
	for i := range want {
		if string(got.Skills[i]) != want[i] {
			t.Errorf("skill %d:\n got %s\nwant %s", i, got.Skills[i], want[i])
		}
	}
	if got.TTL != 5000 || got.CacheScope != "private" {
		t.Errorf("ttlMs %d cacheScope %q, want the shortest ttl (5000) and private", got.TTL, got.CacheScope)
	}
}
