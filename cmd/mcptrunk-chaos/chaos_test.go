package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Garbage mode is only useful if no line it writes parses as JSON.
func TestGarbageLinesAreNotJSON(t *testing.T) {
	for _, line := range garbageLines {
		if json.Valid([]byte(line)) || strings.Contains(line, "\n") {
			t.Errorf("garbage line %q is valid JSON or spans lines", line)
		}
	}
}

// The junk a working session writes must be nothing a client could act on:
// no line names a method, and none spans lines.
func TestJunkLinesCarryNoMethod(t *testing.T) {
	for _, line := range junkLines {
		if strings.Contains(line, "\n") {
			t.Errorf("junk line %q spans lines", line)
		}
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method != "" {
			t.Errorf("junk line %q names a method", line)
		}
	}
}

func TestParseStarts(t *testing.T) {
	for _, tc := range []struct {
		crashFirst int
		ranges     string
		faulty     []int
		fine       []int
	}{
		{-1, "", []int{0, 1, 7}, nil},
		{2, "", []int{0, 1}, []int{2, 3}},
		{0, "", nil, []int{0, 1}},
		{-1, "1-2", []int{1, 2}, []int{0, 3}},
		{-1, "0,3-4", []int{0, 3, 4}, []int{1, 2, 5}},
		{1, "3", []int{0, 3}, []int{1, 2, 4}},
	} {
		f, err := parseStarts(tc.crashFirst, tc.ranges)
		if err != nil {
			t.Fatalf("parseStarts(%d, %q): %v", tc.crashFirst, tc.ranges, err)
		}
		for _, k := range tc.faulty {
			if !f(k) {
				t.Errorf("parseStarts(%d, %q): start %d should misbehave", tc.crashFirst, tc.ranges, k)
			}
		}
		for _, k := range tc.fine {
			if f(k) {
				t.Errorf("parseStarts(%d, %q): start %d should behave", tc.crashFirst, tc.ranges, k)
			}
		}
	}
	for _, bad := range []string{"x", "2-1", "-1", "1-"} {
		if _, err := parseStarts(-1, bad); err == nil {
			t.Errorf("parseStarts(%q): no error", bad)
		}
	}
}

func TestCountStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	for want := range 3 {
		got, err := countStart(path)
		if err != nil || got != want {
			t.Fatalf("start %d: got %d, %v", want, got, err)
		}
	}
	if data, _ := os.ReadFile(path); strings.TrimSpace(string(data)) != "3" {
		t.Errorf("state file holds %q, want 3", data)
	}
	if err := os.WriteFile(path, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := countStart(path); err == nil {
		t.Error("a state file that is not a counter: no error")
	}
}

func TestEffectiveMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	o := options{mode: "exit", stateFile: path, crashFirst: 2}
	for i, want := range []string{"exit", "exit", "ok", "ok"} {
		mode, start, err := o.effectiveMode()
		if err != nil || mode != want || start != i {
			t.Errorf("start %d: mode %q start %d err %v, want %q", i, mode, start, err, want)
		}
	}
	if _, _, err := (options{mode: "exit", crashFirst: 1}).effectiveMode(); err == nil {
		t.Error("-crash-first without -state-file: no error")
	}
}

func TestHugeText(t *testing.T) {
	for _, n := range []int{0, 1, 61, 62, 63, 1000} {
		s := hugeText(n)
		if len(s) != n {
			t.Errorf("hugeText(%d) has %d bytes", n, len(s))
		}
		if b, _ := json.Marshal(s); len(b) != n+2 {
			t.Errorf("hugeText(%d) needs escaping in JSON", n)
		}
	}
}
