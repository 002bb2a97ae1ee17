package tasks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Watch reports each new status once, as a 2025-11-25 Task with the
// server's id, and stops at the end of the task.
func TestWatchStatuses(t *testing.T) {
	s := &script{statuses: []string{
		`{"taskId":"t1","status":"working","pollIntervalMs":1}`,
		`{"taskId":"t1","status":"working","pollIntervalMs":1}`,
		`{"taskId":"t1","status":"input_required","pollIntervalMs":1,"inputRequests":{}}`,
		`{"taskId":"t1","status":"completed","result":{}}`,
	}}
	var got []string
	Watch(context.Background(), s, "srv", "t1", time.Millisecond, func() bool { return true }, func(server string, params json.RawMessage) {
		if server != "srv" || strings.Contains(string(params), "result") || strings.Contains(string(params), "inputRequests") {
			t.Errorf("status(%s, %s): want the server and a 2025-11-25 Task", server, params)
		}
		var task struct{ TaskID, Status string }
		_ = json.Unmarshal(params, &task)
		got = append(got, task.TaskID+" "+task.Status)
	})
	if strings.Join(got, ",") != "t1 working,t1 input_required,t1 completed" {
		t.Errorf("statuses %q, want each change once, ending at completed", got)
	}
	if n := len(s.methods()); n != 4 {
		t.Errorf("%d polls, want 4 (none after the end)", n)
	}
}

// Watch stops, asking nothing, once the host that owned the task is gone.
func TestWatchOwnerGone(t *testing.T) {
	s := &script{statuses: []string{`{"taskId":"t1","status":"working"}`}}
	Watch(context.Background(), s, "srv", "t1", time.Millisecond, func() bool { return false }, func(string, json.RawMessage) { t.Error("a status was given") })
	if calls := s.methods(); len(calls) != 0 {
		t.Errorf("calls %q, want none", calls)
	}
}

// The first poll of a watched task waits the interval its creation
// suggested (a 2025-11-25 task's pollInterval), bounded as every poll is.
func TestCreatedInterval(t *testing.T) {
	for _, tc := range []struct {
		created string
		want    time.Duration
	}{
		{`{"task":{"taskId":"t","status":"working","pollInterval":250}}`, 250 * time.Millisecond},
		{`{"task":{"taskId":"t","status":"working"}}`, defaultPoll},
		{`{"task":{"taskId":"t","pollInterval":1}}`, minPoll},
		{`{"task":{"taskId":"t","pollInterval":86400000}}`, maxPoll},
		{`not json`, defaultPoll},
	} {
		if got := createdInterval(json.RawMessage(tc.created)); got != tc.want {
			t.Errorf("CreatedInterval(%s) = %v, want %v", tc.created, got, tc.want)
		}
	}
}
