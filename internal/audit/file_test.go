package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// Past maxBytes the file is rotated: file.1 is the newest old file, three
// are kept, no file is over the size, and the lines still there are the
// newest ones, in order, none lost between files.
func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const maxBytes = 1000
	l, _ := newTestLog(t, config.Audit{File: path, MaxBytes: maxBytes})
	const n = 100
	for i := range n {
		item := fmt.Sprintf("mcp__notes__t%03d", i)
		request(l, observe.Request{Method: "tools/call", Server: "notes", Item: item, Params: json.RawMessage(`{"name":"` + item + `"}`)},
			observe.Outcome{Result: json.RawMessage(`{}`)})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".4"); !os.IsNotExist(err) {
		t.Errorf("a fourth old file: %v", err)
	}
	var items []string
	for _, p := range []string{path + ".3", path + ".2", path + ".1", path} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > maxBytes || st.Size() == 0 {
			t.Errorf("%s is %d bytes, want 1 to %d", p, st.Size(), maxBytes)
		}
		for _, line := range readLines(t, p) {
			items = append(items, line["item"].(string))
		}
	}
	if len(items) == 0 || items[len(items)-1] != fmt.Sprintf("mcp__notes__t%03d", n-1) {
		t.Fatalf("the newest line is not last: %q", items)
	}
	first := 0
	fmt.Sscanf(items[0], "mcp__notes__t%03d", &first)
	for i, item := range items {
		if want := fmt.Sprintf("mcp__notes__t%03d", first+i); item != want {
			t.Fatalf("line %d is %s, want %s: lines lost in rotation", i, item, want)
		}
	}
	if l.Dropped() != 0 {
		t.Errorf("Dropped() = %d", l.Dropped())
	}
}

// A file that is already there is appended to, its size counted toward
// rotation.
func TestAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 900)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, _ := newTestLog(t, config.Audit{File: path, MaxBytes: 1000})
	request(l, observe.Request{Method: "resources/read", Item: "mcptrunk://notes/a", Params: json.RawMessage(`{"uri":"mcptrunk://notes/a"}`)}, observe.Outcome{Result: json.RawMessage(`{"contents":[]}`)})
	l.Close()
	if old, err := os.ReadFile(path + ".1"); err != nil || len(old) != 901 {
		t.Fatalf("the old file was not rotated whole: %d bytes, %v", len(old), err)
	}
	if lines := readLines(t, path); len(lines) != 1 {
		t.Errorf("%d lines in the new file", len(lines))
	}
}

// A file that cannot be written never fails or holds up a request: its
// lines are dropped, counted and logged (once, not per line), and the log
// resumes when the file can be written again.
func TestUnwritable(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "logs")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "audit.jsonl")
	l, logs := newTestLog(t, config.Audit{File: path})
	call := func(item string) {
		request(l, observe.Request{Method: "tools/call", Item: item, Params: json.RawMessage(`{"name":"` + item + `"}`)}, observe.Outcome{Result: json.RawMessage(`{}`)})
	}
	for range 5 {
		call("mcp__notes__lost")
	}
	waitFor(t, "five lines dropped", func() bool { return l.Dropped() == 5 })
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	call("mcp__notes__kept")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := l.Dropped(); got != 5 {
		t.Errorf("Dropped() = %d after the file was writable again, want 5", got)
	}
	lines := readLines(t, path)
	if len(lines) != 1 || lines[0]["item"] != "mcp__notes__kept" {
		t.Errorf("lines after recovery: %v", lines)
	}
	text := logs.String()
	if strings.Count(text, "audit lines dropped") != 1 || !strings.Contains(text, "cannot be opened") || !strings.Contains(text, "audit log written again") {
		t.Errorf("the trunk's log:\n%s", text)
	}
	// After Close a request still ends normally; its line is counted.
	call("mcp__notes__late")
	if got := l.Dropped(); got != 6 {
		t.Errorf("Dropped() after Close = %d, want 6", got)
	}
}
