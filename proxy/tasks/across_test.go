package tasks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

func hostID(id string) string { return "host-" + id }

// One task in both shapes: 2026-07-28's flat members become 2025-11-25's
// Task (ttlMs -> ttl, pollIntervalMs -> pollInterval, an absent ttl
// null, nothing inlined) and back (a null ttl left out), the id the host's.
func TestTaskModels(t *testing.T) {
	flat := `{"resultType":"task","taskId":"s1","status":"working","statusMessage":"half","createdAt":"c","lastUpdatedAt":"u","ttlMs":500,"pollIntervalMs":20,"result":{"content":[]},"inputRequests":{}}`
	nested := task2025(json.RawMessage(flat), hostID)
	if want := `{"createdAt":"c","lastUpdatedAt":"u","pollInterval":20,"status":"working","statusMessage":"half","taskId":"host-s1","ttl":500}`; string(nested) != want {
		t.Errorf("task2025 = %s, want %s", nested, want)
	}
	if got := task2025(json.RawMessage(`{"taskId":"s1","status":"working"}`), hostID); !strings.Contains(string(got), `"ttl":null`) {
		t.Errorf("task2025 without ttlMs = %s, want ttl null (unlimited)", got)
	}
	back := flatTask(nested, "complete", func(id string) string { return id })
	if want := `{"createdAt":"c","lastUpdatedAt":"u","pollIntervalMs":20,"resultType":"complete","status":"working","statusMessage":"half","taskId":"host-s1","ttlMs":500}`; string(back) != want {
		t.Errorf("FlatTask = %s, want %s", back, want)
	}
	created := flatCreated(json.RawMessage(`{"task":{"taskId":"s2","status":"working","ttl":null}}`), hostID)
	if !IsCreated(created) || rawjson.HasField(created, "ttlMs") || !strings.Contains(string(created), `"taskId":"host-s2"`) {
		t.Errorf("FlatCreated = %s, want the extension's CreateTaskResult without a ttl", created)
	}
	if res := json.RawMessage(`{"content":[]}`); string(flatCreated(res, hostID)) != string(res) {
		t.Errorf("FlatCreated of a result that is no task changed it")
	}
	if got := created2025(json.RawMessage(flat), hostID); !strings.HasPrefix(string(got), `{"task":{`) || IsCreated(got) {
		t.Errorf("created2025 = %s, want the task nested", got)
	}
}

// createAcross sends a 2025 host's call without its task member (the
// extension server decides) and a 2026 host's with one, and answers in
// the host's model with the server's own id.
func TestCreateAcross(t *testing.T) {
	var sent json.RawMessage
	res, err := createAcross(toExtension, json.RawMessage(`{"name":"x","task":{"ttl":5}}`), func(p json.RawMessage) (json.RawMessage, error) {
		sent = p
		return json.RawMessage(`{"resultType":"task","taskId":"s1","status":"working"}`), nil
	})
	if err != nil || rawjson.HasField(sent, "task") || !strings.Contains(string(res), `{"task":{`) || !strings.Contains(string(res), `"taskId":"s1"`) {
		t.Errorf("ToExtension: sent %s, got %s %v", sent, res, err)
	}
	res, err = createAcross(to2025, json.RawMessage(`{"name":"x"}`), func(p json.RawMessage) (json.RawMessage, error) {
		sent = p
		return json.RawMessage(`{"task":{"taskId":"s2","status":"working"}}`), nil
	})
	if err != nil || !strings.Contains(string(sent), `"task":{}`) || !IsCreated(res) || !strings.Contains(string(res), `"taskId":"s2"`) {
		t.Errorf("to2025: sent %s, got %s %v", sent, res, err)
	}
}

// A 2026-07-28 host's tasks/get of a failed 2025-11-25 task inlines the
// error tasks/result answers; one of a working task asks nothing more.
func TestRouteExtensionHostFailed(t *testing.T) {
	s := &scriptedServer{answers: map[string]string{"tasks/get": `{"taskId":"s1","status":"failed"}`}, errs: map[string]error{"tasks/result": jsonrpc.Errorf(-32000, "it broke")}}
	r := Route{Follower: Follower{Conn: s, Server: "srv"}, ServerCaps: json.RawMessage(`{"tasks":{}}`), Issue: hostID, Export: func(r json.RawMessage) json.RawMessage { return r }}
	res, err := r.Answer(context.Background(), context.Background(), "tasks/get", json.RawMessage(`{"taskId":"s1"}`), true)
	if err != nil || !strings.Contains(string(res), `"error":{"code":-32000,"message":"it broke"}`) || !strings.Contains(string(res), `"taskId":"host-s1"`) {
		t.Errorf("tasks/get of a failed task: %s %v, want the error inlined under the host's id", res, err)
	}
	s.answers["tasks/get"] = `{"taskId":"s1","status":"working"}`
	s.calls = nil
	if _, err := r.Answer(context.Background(), context.Background(), "tasks/get", json.RawMessage(`{"taskId":"s1"}`), true); err != nil || len(s.calls) != 1 {
		t.Errorf("tasks/get of a working task: %v, calls %q, want tasks/get alone", err, s.calls)
	}
}

// crosses: a server answers in the host's model when it has it.
func TestCrosses(t *testing.T) {
	tasks2025, ext, both := `{"tasks":{}}`, `{"extensions":{"`+Extension+`":{}}}`, `{"tasks":{},"extensions":{"`+Extension+`":{}}}`
	for _, c := range []struct {
		caps      string
		stateless bool
		want      bool
	}{{tasks2025, true, true}, {tasks2025, false, false}, {ext, false, true}, {ext, true, false}, {both, true, false}, {both, false, false}} {
		if got := crosses(json.RawMessage(c.caps), c.stateless); got != c.want {
			t.Errorf("Crosses(%s, stateless %v) = %v, want %v", c.caps, c.stateless, got, c.want)
		}
	}
}

// scriptedServer answers each method with a fixed answer or error.
type scriptedServer struct {
	answers map[string]string
	errs    map[string]error
	calls   []string
}

func (s *scriptedServer) Call(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	s.calls = append(s.calls, method)
	if err := s.errs[method]; err != nil {
		return nil, err
	}
	return json.RawMessage(s.answers[method]), nil
}
