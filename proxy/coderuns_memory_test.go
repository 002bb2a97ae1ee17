package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// heldRuns is a RunProgram whose runs each hold their place until the
// test releases one: started passes on each run's code as it starts.
type heldRuns struct {
	started chan string
	release chan struct{}
}

func newHeldRuns() *heldRuns {
	return &heldRuns{started: make(chan string, 8), release: make(chan struct{})}
}

func (r *heldRuns) run(ctx context.Context, code string, _ child.Options) (child.Result, error) {
	r.started <- code
	select {
	case <-r.release:
		return child.Result{Value: json.RawMessage(`"done ` + code + `"`)}, nil
	case <-ctx.Done():
		return child.Result{}, ctx.Err()
	}
}

// gatedTrunk is a trunk with code mode on under trunkOpts' codeMode,
// its runs held, and queued passed the number of runs waiting for a place
// each time a run starts or gives up waiting.
func gatedTrunk(t *testing.T, codeMode map[string]any) (*memHost, *heldRuns, chan int) {
	t.Helper()
	runs := newHeldRuns()
	codeMode["enabled"] = true
	tr, h := memTrunk(t, memserver.Set{}, nil, map[string]any{"codeMode": codeMode}, &Options{RunProgram: runs.run})
	queued := make(chan int, 8)
	tr.codeRuns.mu.Lock()
	tr.codeRuns.onQueue = func(waiting int) { queued <- waiting }
	tr.codeRuns.mu.Unlock()
	h.initialize(`{}`)
	// The runs below call mcp__trunk__run_code at once: have the host see
	// it listed first, as a host would before calling it.
	if res, errObj := h.call("tools/list", `{}`); !strings.Contains(string(res), `"mcp__trunk__run_code"`) {
		t.Fatalf("tools/list: %s %s, want mcp__trunk__run_code listed", res, errObj)
	}
	return h, runs, queued
}

func sendRun(h *memHost, id, code string) {
	h.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"mcp__trunk__run_code","arguments":{"code":` + mustQuote(code) + `}}}`)
}

// runAnswers waits for the answers to run_code requests ids, in any
// order: each one's text and whether it is a tool error.
func runAnswers(h *memHost, ids ...string) map[string]struct {
	Text    string
	IsError bool
} {
	h.t.Helper()
	out := map[string]struct {
		Text    string
		IsError bool
	}{}
	for len(out) < len(ids) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(h.next("the answers to "+strings.Join(ids, ", "))), &m) != nil || m["method"] != nil {
			continue
		}
		var id string
		var res struct {
			Content []struct{ Text string }
			IsError bool
		}
		if json.Unmarshal(m["id"], &id) != nil || json.Unmarshal(m["result"], &res) != nil || len(res.Content) == 0 {
			h.t.Fatalf("answer %s %s, want a tool result", m["id"], m["error"])
		}
		out[id] = struct {
			Text    string
			IsError bool
		}{res.Content[0].Text, res.IsError}
	}
	return out
}

// TestCodeModeMaxRuns: past trunk.codeMode.maxRuns runs at once, a run
// waits its turn and starts when one ends; one that waits its whole wall
// time ends with an error naming the setting; one cancelled while it
// waits takes no place.
func TestCodeModeMaxRuns(t *testing.T) {
	t.Run("waits its turn", func(t *testing.T) {
		h, runs, queued := gatedTrunk(t, map[string]any{"maxRuns": 2})
		for _, id := range []string{"a", "b", "c"} {
			sendRun(h, id, id)
		}
		first := map[string]bool{await(t, runs.started, "first run"): true, await(t, runs.started, "second run"): true}
		if n := await(t, queued, "third run waiting"); n != 1 {
			t.Fatalf("%d runs waiting, want 1", n)
		}
		select {
		case code := <-runs.started:
			t.Fatalf("run %s started while 2 (maxRuns) were running", code)
		default:
		}
		runs.release <- struct{}{}
		third := await(t, runs.started, "third run after one ended")
		if first[third] {
			t.Fatalf("run %s started twice", third)
		}
		runs.release <- struct{}{}
		runs.release <- struct{}{}
		for id, a := range runAnswers(h, "a", "b", "c") {
			if a.IsError || !strings.Contains(a.Text, `"done `+id+`"`) {
				t.Errorf("run %s: %+v, want its result", id, a)
			}
		}
	})

	t.Run("waits within its wall time", func(t *testing.T) {
		// The wall time bounds the first run's way to its start as well: 3 s,
		// not less, so that a loaded machine still starts it (200 ms did not,
		// once, at load 20).
		h, runs, queued := gatedTrunk(t, map[string]any{"maxRuns": 1, "wallTime": "3s"})
		sendRun(h, "a", "a")
		await(t, runs.started, "first run")
		sendRun(h, "b", "b")
		await(t, queued, "second run waiting")
		b := runAnswers(h, "b")["b"]
		if !b.IsError || !strings.Contains(b.Text, "trunk.codeMode.maxRuns (1)") {
			t.Errorf("the run that found no place: %+v, want a tool error naming trunk.codeMode.maxRuns", b)
		}
		runs.release <- struct{}{}
		if a := runAnswers(h, "a")["a"]; a.IsError {
			t.Errorf("the run that had the place: %+v", a)
		}
		select {
		case code := <-runs.started:
			t.Errorf("run %s started after its wall time", code)
		default:
		}
	})

	t.Run("cancelled while waiting", func(t *testing.T) {
		h, runs, queued := gatedTrunk(t, map[string]any{"maxRuns": 1})
		sendRun(h, "a", "a")
		await(t, runs.started, "first run")
		sendRun(h, "b", "b")
		await(t, queued, "second run waiting")
		h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
		if n := await(t, queued, "the cancelled run giving up"); n != 0 {
			t.Fatalf("%d runs waiting after the cancel, want 0", n)
		}
		runs.release <- struct{}{}
		runAnswers(h, "a")
		sendRun(h, "c", "c")
		if code := await(t, runs.started, "the run after the cancelled one"); code != "c" {
			t.Errorf("run %s started, want c (b was cancelled)", code)
		}
		runs.release <- struct{}{}
		runAnswers(h, "c")
	})
}
