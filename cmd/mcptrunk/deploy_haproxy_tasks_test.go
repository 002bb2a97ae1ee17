//go:build !windows

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit/taskserver"
)

// deploy/haproxy.cfg in front of two replicas that share
// trunk.http.signingKeyFile: a 2026-07-28 task created through HAProxy is
// polled through it to its end, HAProxy sending the polls to both replicas
// in turn (it has no affinity for stateless requests), so the replica that
// did not create the task answers for it too, from its id alone.
func TestDeployHAProxyTasks(t *testing.T) {
	t.Parallel()
	bin := needHAProxy(t)
	ctx := testCtx(t, 2*time.Minute)
	tag := newTag(t)
	t.Cleanup(func() { assertNoProcesses(t, tag, 10*time.Second) })
	key := filepath.Join(t.TempDir(), "signing.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("one deployment's secret ", 3)), 0o600); err != nil {
		t.Fatal(err)
	}
	servers := map[string]server{"tasks": pinStateless(server{"type": "http", "url": taskserver.Start(t), "namespace": false})}
	cfg := writeConfig(t, servers, map[string]any{"http": map[string]any{"signingKeyFile": key}})
	lb := startDeployHAProxy(t, ctx, bin, tag, startDeployReplica(t, ctx, "replica1", cfg), startDeployReplica(t, ctx, "replica2", cfg))
	call := func(method, name, params string) (map[string]json.RawMessage, json.RawMessage) {
		t.Helper()
		return postStateless(t, ctx, lb.url, tasksExtensionMeta, method, name, params)
	}

	before := answeredBy(t, ctx, lb)
	created, errObj := call("tools/call", "slow_compute", `"name":"slow_compute","arguments":{"seconds":1,"label":"through haproxy"}`)
	var id string
	if json.Unmarshal(created["taskId"], &id) != nil || id == "" {
		t.Fatalf("slow_compute through haproxy: %v %s, want a task", created, errObj)
	}
	polls := 0
	if err := eventually(ctx, 50*time.Millisecond, func() error {
		polls++
		got, errObj := call("tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
		if errObj != nil {
			t.Fatalf("tasks/get %d through haproxy: %s", polls, errObj) // a replica that could not route the id
		}
		var status string
		_ = json.Unmarshal(got["status"], &status)
		if status != "completed" || polls < 2 {
			return fmt.Errorf("status %q after %d polls", status, polls)
		}
		if !strings.Contains(string(got["result"]), "through haproxy") {
			t.Errorf("the completed task's result: %s", got["result"])
		}
		return nil
	}); err != nil {
		t.Fatalf("the task never completed through haproxy: %v", err)
	}
	after := answeredBy(t, ctx, lb)
	for _, name := range []string{"replica1", "replica2"} {
		if after[name] <= before[name] {
			t.Errorf("%s answered none of the task's %d requests (2xx %d before, %d after): both should, in turn", name, polls+1, before[name], after[name])
		}
	}
}
