package audit

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// A task gets a line when created and one when it ends, each naming the
// server's task id, the tool and who called it (the stdio host's session
// named as the log names it).
func TestTaskLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := newTestLog(t, config.Audit{File: path})
	call := observe.Request{Method: "tools/call", Server: "notes", Item: "mcp__notes__slow", Transport: config.TransportHTTP,
		Session: "http-7", Subject: "ann@example.com", Client: "claude-code", Revision: "2025-11-25"}
	end := l.BeginTask(context.Background(), observe.Task{Server: "notes", ID: "srv-1", Call: call})
	end(observe.TaskEnd{Status: observe.TaskCancelled, Duration: 2500 * time.Millisecond})
	stdio := l.BeginTask(context.Background(), observe.Task{Server: "notes", ID: "srv-2", Call: observe.Request{Item: "mcp__notes__slow"}, Driven: true})
	stdio(observe.TaskEnd{Status: observe.TaskCompleted})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	want := []struct{ task, outcome, session, subject string }{
		{"srv-1", OutcomeTaskCreated, "http-7", "ann@example.com"},
		{"srv-1", observe.TaskCancelled, "http-7", "ann@example.com"},
		{"srv-2", OutcomeTaskCreated, SessionStdio, ""},
		{"srv-2", observe.TaskCompleted, SessionStdio, ""},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		got := lines[i]
		subject, _ := got["subject"].(string)
		if got["method"] != MethodTask || got["server"] != "notes" || got["item"] != "mcp__notes__slow" || got["task"] != w.task ||
			got["outcome"] != w.outcome || got["session"] != w.session || subject != w.subject {
			t.Errorf("line %d: %v, want %+v", i, got, w)
		}
	}
	if lines[1]["durationMs"] != 2500.0 || lines[0]["durationMs"] != 0.0 {
		t.Errorf("durations %v, %v: want the end's to be the task's 2500 ms", lines[0]["durationMs"], lines[1]["durationMs"])
	}
}
