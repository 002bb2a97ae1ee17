package main

import (
	"encoding/json"
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
