package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/internal/testkit/taskserver"
)

// tasksExtensionMeta is the _meta of a 2026-07-28 request whose host
// declares the tasks extension.
const tasksExtensionMeta = `"_meta":{"` + protocol.MetaProtocolVersion + `":"2026-07-28","` + protocol.MetaClientCapabilities + `":{"extensions":{"` + taskserver.Extension + `":{}}}}`

// Replicas of one deployment share trunk.http.signingKeyFile (docs/deploy.md),
// so a 2026-07-28 task created through one is polled, and finished,
// through the other: the task id routes itself, with no table in either
// process. A trunk with a key of its own refuses the id, and no server is
// asked.
func TestReplicasShareTasks(t *testing.T) {
	t.Parallel()
	tasksURL := taskserver.Start(t)
	key := filepath.Join(t.TempDir(), "signing.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("a shared secret ", 4)), 0o600); err != nil {
		t.Fatal(err)
	}
	servers := map[string]server{"tasks": pinStateless(server{"type": "http", "url": tasksURL, "namespace": false})}
	shared := writeConfig(t, servers, map[string]any{"http": map[string]any{"signingKeyFile": key}})
	ctx := testCtx(t, 2*time.Minute)
	one, two := startHTTPTrunk(t, ctx, shared), startHTTPTrunk(t, ctx, shared)
	stranger := startHTTPTrunk(t, ctx, writeConfig(t, servers, nil))

	call := func(trunk *httpTrunk, method, name, params string) (result map[string]json.RawMessage, errObj json.RawMessage) {
		t.Helper()
		return postStateless(t, ctx, trunk.url, tasksExtensionMeta, method, name, params)
	}

	created, errObj := call(one, "tools/call", "slow_compute", `"name":"slow_compute","arguments":{"seconds":1,"label":"replicas"}`)
	var id string
	if json.Unmarshal(created["taskId"], &id) != nil || id == "" || string(created["resultType"]) != `"task"` {
		t.Fatalf("slow_compute through the first replica: %v %s, want a task", created, errObj)
	}
	if res, errObj := call(stranger, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id)); res != nil || !strings.Contains(string(errObj), "-32602") {
		t.Errorf("the task id at a trunk with a key of its own: %v %s, want -32602", res, errObj)
	}
	// Polled through the second replica until it ends, as a host polls.
	var status string
	if err := eventually(ctx, 100*time.Millisecond, func() error {
		got, errObj := call(two, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
		if errObj != nil {
			return fmt.Errorf("tasks/get through the second replica: %s", errObj)
		}
		_ = json.Unmarshal(got["status"], &status)
		if status != "completed" {
			return fmt.Errorf("status %q", status)
		}
		if !strings.Contains(string(got["result"]), `"content"`) {
			t.Errorf("the completed task's result through the second replica: %s", got["result"])
		}
		return nil
	}); err != nil {
		t.Fatalf("the task never completed as seen through the second replica: %v", err)
	}
}
