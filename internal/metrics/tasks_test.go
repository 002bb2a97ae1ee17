package metrics

import (
	"context"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
)

// Tasks are counted when created, by server, and when ended, by server and
// outcome; a task not yet ended is counted as created only.
func TestTasksCounted(t *testing.T) {
	m := newTest(t)
	ends := map[string]string{"t1": observe.TaskCompleted, "t2": observe.TaskFailed, "t3": observe.TaskCancelled, "t4": observe.TaskCompleted}
	for id, status := range ends {
		end := m.BeginTask(context.Background(), observe.Task{Server: "notes", ID: id})
		end(observe.TaskEnd{Status: status})
	}
	m.BeginTask(context.Background(), observe.Task{Server: "weather", ID: "running"})
	fams := scrape(t, m)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mcptrunk_tasks_created_total", map[string]string{"server": "notes"}, 4},
		{"mcptrunk_tasks_created_total", map[string]string{"server": "weather"}, 1},
		{"mcptrunk_tasks_ended_total", map[string]string{"server": "notes", "outcome": "completed"}, 2},
		{"mcptrunk_tasks_ended_total", map[string]string{"server": "notes", "outcome": "failed"}, 1},
		{"mcptrunk_tasks_ended_total", map[string]string{"server": "notes", "outcome": "cancelled"}, 1},
	} {
		if got, ok := value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := value(fams, "mcptrunk_tasks_ended_total", map[string]string{"server": "weather", "outcome": "completed"}); ok {
		t.Error("a task still running was counted as ended")
	}
}
