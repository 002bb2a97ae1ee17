package child_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// A runner's call over child.MaxMessageBytes is answered with an error
// saying so, without reaching the call function, and the run goes on to
// its answer. The test plays the runner.
func TestRunOverCallOverTheMessageLimit(t *testing.T) {
	trunkIn, runnerOut := io.Pipe()
	runnerIn, trunkOut := io.Pipe()
	called := 0
	call := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		called++
		return json.RawMessage(`{}`), nil
	}
	type ran struct {
		res child.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := child.RunOver(t.Context(), trunkIn, trunkOut, "return 1", child.Options{Call: call, Budgets: budgets})
		done <- ran{res, err}
	}()
	lines := bufio.NewReader(runnerIn)
	read := func() map[string]json.RawMessage {
		t.Helper()
		line, err := lines.ReadBytes('\n')
		var m map[string]json.RawMessage
		if err != nil || json.Unmarshal(line, &m) != nil {
			t.Fatalf("reading the trunk: %q, %v", line, err)
		}
		return m
	}
	run := read()
	if string(run["method"]) != `"run"` {
		t.Fatalf("the trunk's first message: %v", run)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"call","params":{"name":"mcp__t__x","arguments":{"s":"` + strings.Repeat("x", child.MaxMessageBytes) + `"}}}` + "\n"
	if _, err := io.WriteString(runnerOut, big); err != nil {
		t.Fatal(err)
	}
	answer := read()
	if string(answer["id"]) != "1" || !strings.Contains(string(answer["error"]), "more than the 16777216 bytes this connection reads (the most a code-mode program may send at once)") {
		t.Errorf("the answer to a call over the limit: %v", answer)
	}
	if _, err := io.WriteString(runnerOut, `{"jsonrpc":"2.0","id":`+string(run["id"])+`,"result":{"value":1,"calls":1}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, lines); err != nil { // the trunk ends its side
		t.Fatal(err)
	}
	runnerOut.Close()
	r := <-done
	if r.err != nil || string(r.res.Value) != "1" || called != 0 {
		t.Errorf("the run: %+v, %v; %d calls reached the call function, want none", r.res, r.err, called)
	}
}
