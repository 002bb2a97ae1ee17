package main

import (
	"strings"
	"testing"
)

// TestCallArgumentsMessage: arguments that are not a JSON object are
// refused with what they are, never a Go type's name.
func TestCallArgumentsMessage(t *testing.T) {
	for args, want := range map[string]string{
		`[1]`:   "got an array",
		`"x"`:   "got a string",
		`3`:     "got a number",
		`null`:  "got null",
		`{"a":`: "not valid JSON",
	} {
		err := argumentsObject([]byte(args))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go value") {
			t.Errorf("arguments %s: %v, want an error saying %q", args, err, want)
		}
	}
	if err := argumentsObject([]byte(`{"q": 1}`)); err != nil {
		t.Errorf("an object: %v", err)
	}
}
