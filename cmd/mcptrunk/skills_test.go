package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Skills through the trunk, read by the TypeScript SDK's own SkillsClient:
// a server with two skills (testdata/npm/skillserver.mjs over a directory)
// behind `mcptrunk serve`, a 2026-07-28 host that lists the skills, gets
// each, and reads every file, checking its size, digest and SKILL.md's
// frontmatter against the entry. Every check is the SDK's.
func TestSkillsVerifiedByTheHost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 120*time.Second)
	dir := t.TempDir()
	for path, body := range map[string]string{
		"pdf/SKILL.md":        "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse scripts/fill.py. Ünïcödé and a tab\there.\n",
		"pdf/scripts/fill.py": "print('filled')\n",
		"journal/SKILL.md":    "---\nname: journal\ndescription: Keep a journal\n---\nWrite daily.\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeConfig(t, map[string]server{
		"docs":  {"command": npmNode(t), "args": []string{filepath.Join(moduleRoot, "testdata", "npm", "skillserver.mjs"), dir}},
		"notes": notesServer(), // declares no skills: left out of the list
	}, nil)
	lines := runTSHost2(t, ctx, map[string]any{"pin": revStateless, "steps": []map[string]any{{"skills": "verify"}}},
		trunkBin, "serve", "--config", cfg, "--log-level", "error")
	if len(lines) != 2 {
		t.Fatalf("want a line for the connection and one for the step: %v", lines)
	}
	l := lines[1]
	if !l.OK {
		t.Fatalf("the SkillsClient through the trunk: %s", l.raw)
	}
	if want := []string{"skill://docs/journal/SKILL.md", "skill://docs/pdf/SKILL.md"}; !slices.Equal(l.Names, want) {
		t.Errorf("skills %q, want %q", l.Names, want)
	}
	verified := strings.Split(l.Text, "\n")
	slices.Sort(verified)
	if want := []string{"skill://docs/journal/SKILL.md", "skill://docs/pdf/SKILL.md", "skill://docs/pdf/scripts/fill.py"}; !slices.Equal(verified, want) {
		t.Errorf("files verified by the host %q, want %q", verified, want)
	}
}
