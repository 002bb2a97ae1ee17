package pin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLockfileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcptrunk.lock.json")
	l, err := Read(path)
	if err != nil || len(l.Servers) != 0 {
		t.Fatalf("a missing lockfile: %v, %v; want an empty lock", l, err)
	}
	s, _ := Snapshot(map[Kind][]Def{Tools: {{Key: "search", Raw: json.RawMessage(`{"name":"search","description":"Find."}`)}}})
	if err := Update(path, func(l *Lock) error { l.Servers["notes"] = s; return nil }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"version": 1`, `"notes": {`, `"tools": {`, `"search": {`, `"sha256": "` + s[Tools]["search"].SHA256 + `"`, `"description": "Find."`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the lockfile lacks %q:\n%s", want, data)
		}
	}
	back, err := Read(path)
	if err != nil || !back.Servers["notes"].Matches(Tools, "search", s[Tools]["search"].SHA256) {
		t.Fatalf("read back: %v", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*")); len(ents) != 1 {
		t.Errorf("files left beside the lockfile: %v", ents)
	}
}

func TestLockfileCorrupt(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"garbage": "{not json", "version": `{"version": 99, "servers": {}}`} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path); err == nil {
			t.Errorf("%s: a bad lockfile was read without an error", name)
		}
		if err := Update(path, func(*Lock) error { return nil }); err == nil {
			t.Errorf("%s: Update over a bad lockfile did not fail", name)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("%s: a bad lockfile was overwritten", name)
		}
	}
}

// Updates from several writers at once each see the others' changes.
func TestLockfileConcurrentUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcptrunk.lock.json")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			s, _ := Snapshot(map[Kind][]Def{Tools: {{Key: "t", Raw: json.RawMessage(fmt.Sprintf(`{"name":"t","description":"%d"}`, i))}}})
			errs <- Update(path, func(l *Lock) error { l.Servers[fmt.Sprint("s", i)] = s; return nil })
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := Read(path)
	if err != nil || len(l.Servers) != 8 {
		t.Fatalf("after 8 concurrent updates the lockfile has %d servers (%v), want 8", len(l.Servers), err)
	}
}
