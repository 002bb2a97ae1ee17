package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

// startReady starts one server and returns its Client, ready.
func startReady(t *testing.T, h *harness, host *Fleet, spec config.Spec) *Client {
	t.Helper()
	if err := host.StartAll(ctxFor(t), []config.Spec{spec}); err != nil {
		t.Fatal(err)
	}
	c, _ := host.Client(spec.Name)
	if state, err := c.State(); state != StateReady {
		t.Fatalf("%s: %s, %v", spec.Name, state, err)
	}
	return c
}

func toolArgs(name string) json.RawMessage {
	return json.RawMessage(`{"name":"` + name + `","arguments":{}}`)
}

// toolCall finds the tools/call the server received for a tool.
func findToolCall(msgs []wireMessage, tool string) (wireMessage, bool) {
	for _, m := range msgs {
		if m.Method == "tools/call" && bytes.Contains(m.Params, []byte(`"name":"`+tool+`"`)) {
			return m, true
		}
	}
	return wireMessage{}, false
}

// cancellationOf finds the notifications/cancelled the server received for
// the request with the given id, and returns its reason.
func cancellationOf(msgs []wireMessage, id json.RawMessage) (string, bool) {
	for _, m := range msgs {
		if m.Method != "notifications/cancelled" {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if json.Unmarshal(m.Params, &p) == nil && bytes.Equal(p.RequestID, id) {
			return p.Reason, true
		}
	}
	return "", false
}

func TestCallReturnsRawResult(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	params := json.RawMessage(`{"name":"echo","arguments":{"s":"<&> é", "n": 1.50}}`)
	res, err := c.Call(ctxFor(t), "tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != testEchoResult {
		t.Errorf("result\n\t%s\nwant exactly\n\t%s", res, testEchoResult)
	}
	// The params reached the server byte for byte.
	m, ok := findToolCall(h.received("srv"), "echo")
	if !ok || !bytes.Equal(m.Params, params) {
		t.Errorf("the server received params %s, want %s", m.Params, params)
	}

	// Notify reaches the server too.
	if err := c.Notify("notifications/roots/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the notification to arrive", func() bool {
		return slices.Contains(h.methods("srv"), "notifications/roots/list_changed")
	})
}

func TestCallServerErrorPassesThrough(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	_, err := c.Call(ctxFor(t), "tools/call", toolArgs("fail"))
	rpcErr, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *jsonrpc.Error", err, err)
	}
	if rpcErr.Code != -32042 || rpcErr.Message != testErrorMessage || string(rpcErr.Data) != testErrorData {
		t.Errorf("error = {%d %q %s}, want {-32042 %q %s}", rpcErr.Code, rpcErr.Message, rpcErr.Data, testErrorMessage, testErrorData)
	}
	// An error answer does not hurt the server.
	if state, _ := c.State(); state != StateReady {
		t.Errorf("state %s after an error answer", state)
	}
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo")); err != nil {
		t.Errorf("a call after the error: %v", err)
	}
}

func TestCallTimeout(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	spec := h.spec("srv", modeNormal)
	spec.Timeouts.Call = config.Duration(300 * time.Millisecond)
	c := startReady(t, h, host, spec)

	began := time.Now()
	_, err := c.Call(ctxFor(t), "tools/call", toolArgs("slow"))
	took := time.Since(began)
	rpcErr, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *jsonrpc.Error", err, err)
	}
	if want := `server "srv": tools/call timed out after 300ms`; rpcErr.Message != want {
		t.Errorf("message %q, want %q", rpcErr.Message, want)
	}
	if took < 300*time.Millisecond || took > slack {
		t.Errorf("the call returned after %v with a 300ms timeout", took)
	}

	// The server was told.
	var call wireMessage
	pollUntil(t, "the server to receive the call", func() bool {
		var ok bool
		call, ok = findToolCall(h.received("srv"), "slow")
		return ok
	})
	var reason string
	pollUntil(t, "notifications/cancelled for the call", func() bool {
		reason, ok = cancellationOf(h.received("srv"), call.ID)
		return ok
	})
	if reason != "timed out" {
		t.Errorf("cancellation reason %q, want %q", reason, "timed out")
	}
	if state, _ := c.State(); state != StateReady {
		t.Errorf("state %s after a timeout", state)
	}
}

func TestCallContextCancelled(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("srv", modeNormal))

	ctx, cancel := context.WithCancel(ctxFor(t))
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "tools/call", toolArgs("slow"))
		done <- err
	}()
	var call wireMessage
	pollUntil(t, "the server to receive the call", func() bool {
		var ok bool
		call, ok = findToolCall(h.received("srv"), "slow")
		return ok
	})
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Call returned %v, want context.Canceled", err)
		}
	case <-time.After(slack):
		t.Fatal("Call did not return after its context was cancelled")
	}
	var reason string
	pollUntil(t, "notifications/cancelled for the call", func() bool {
		var ok bool
		reason, ok = cancellationOf(h.received("srv"), call.ID)
		return ok
	})
	if reason != "cancelled" {
		t.Errorf("cancellation reason %q, want %q", reason, "cancelled")
	}
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo")); err != nil {
		t.Errorf("a call after the cancellation: %v", err)
	}
}

// A server that dies while a call is pending fails that call at once with
// an unavailable error saying how it died, and the Client notices.
func TestCrashMidCall(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	pid := h.pid("srv", "pid")
	changesBefore := len(h.rec.changesOf("srv"))

	began := time.Now()
	_, err := c.Call(ctxFor(t), "tools/call", toolArgs("crash"))
	took := time.Since(began)
	t.Logf("the call failed after %v: %v", took, err)
	if took > slack {
		t.Errorf("the call took %v to fail after the server died", took)
	}
	rpcErr, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *jsonrpc.Error", err, err)
	}
	if rpcErr.Code != jsonrpc.CodeUnavailable {
		t.Errorf("code %d, want %d (unavailable)", rpcErr.Code, jsonrpc.CodeUnavailable)
	}
	for _, want := range []string{`server "srv"`, "exit status 3", "simulated crash in tool crash"} {
		if !strings.Contains(rpcErr.Message, want) {
			t.Errorf("the error does not say %q: %s", want, rpcErr.Message)
		}
	}

	pollUntil(t, "the Client to notice the death", func() bool {
		state, _ := c.State()
		return state == StateFailed
	})
	_, serr := c.State()
	if serr == nil || !strings.Contains(serr.Error(), "went away") || !strings.Contains(serr.Error(), "exit status 3") {
		t.Errorf("the failed state says %v", serr)
	}
	// The event follows the state change.
	pollUntil(t, "a Changed event for the death", func() bool {
		changes := h.rec.changesOf("srv")[changesBefore:]
		return len(changes) > 0 && changes[len(changes)-1].state == StateFailed
	})
	if got := c.Catalog(); got.Tools != nil {
		t.Errorf("a dead server keeps its catalog: %v", itemKeys(got.Tools))
	}
	if f := host.Failures(); len(f) != 1 || f[0].Server != "srv" {
		t.Errorf("Failures() = %v", f)
	}
	if alive(pid) {
		t.Errorf("the dead server's process %d still runs", pid)
	}

	// Later calls fail fast.
	began = time.Now()
	_, err = c.Call(ctxFor(t), "tools/call", toolArgs("echo"))
	if rpcErr, ok := errors.AsType[*jsonrpc.Error](err); !ok || rpcErr.Code != jsonrpc.CodeUnavailable {
		t.Errorf("a call to the dead server: %v", err)
	}
	if took := time.Since(began); took > slack {
		t.Errorf("a call to the dead server took %v", took)
	}
}

// A server that stopped reading and is exiting fails the next call's write
// before the read side notices: the call still gets an unavailable error
// saying how the server ended, not a bare "broken pipe".
func TestCallToServerThatHungUp(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("hangup")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo"))
	rpcErr, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *jsonrpc.Error", err, err)
	}
	if rpcErr.Code != jsonrpc.CodeUnavailable {
		t.Errorf("code %d, want %d (unavailable): %s", rpcErr.Code, jsonrpc.CodeUnavailable, rpcErr.Message)
	}
	for _, want := range []string{`server "srv"`, "exit status 4", "hanging up for good"} {
		if !strings.Contains(rpcErr.Message, want) {
			t.Errorf("the error does not say %q: %s", want, rpcErr.Message)
		}
	}
}

// With a restart policy a dead server comes back with a new process, and
// is left failed once the policy gives up.
func TestRestartAfterCrash(t *testing.T) {
	h := newHarness(t)
	host := h.host(&Options{Restart: RestartPolicy{MaxAttempts: 1, Backoff: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Stable: time.Hour}})
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	first := h.pid("srv", "pid")

	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("crash")); err == nil {
		t.Fatal("the crash call succeeded")
	}
	pollUntil(t, "the server to be restarted", func() bool {
		state, _ := c.State()
		return state == StateReady && h.pid("srv", "pid") != first
	})
	if d := diffItems(c.Catalog().Tools, normalCatalog().Tools); d != "" { // phase B may still run
		t.Errorf("tools after the restart: %s", d)
	}
	if alive(first) {
		t.Errorf("the first process %d still runs", first)
	}
	if s := c.Status(); s.Restarts != 1 {
		t.Errorf("Status().Restarts = %d, want 1", s.Restarts)
	}
	var states []State
	for _, ch := range h.rec.changesOf("srv") {
		states = append(states, ch.state)
	}
	if !slices.Contains(states, StateRestarting) {
		t.Errorf("no Changed event saw it restarting: %v", states)
	}
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo")); err != nil {
		t.Errorf("a call after the restart: %v", err)
	}

	// It died again before Stable: the one attempt is used up.
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("crash")); err == nil {
		t.Fatal("the crash call succeeded")
	}
	pollUntil(t, "the server to be given up on", func() bool {
		state, _ := c.State()
		return state == StateFailed
	})
	if _, err := c.State(); err == nil || !strings.Contains(err.Error(), "gave up after 1 restarts") {
		t.Errorf("the failure says %v", err)
	}
}

// A server that stops answering while its process lives is noticed by the
// health pings, killed and restarted. (Sequential: it shortens the package's
// ping settings.)
func TestUnansweredPingsRestart(t *testing.T) {
	// Restored after the harness's own cleanup has closed the host (cleanups
	// run last-registered first).
	i, d, n := pingInterval, pingTimeout, pingFailures
	t.Cleanup(func() { pingInterval, pingTimeout, pingFailures = i, d, n })
	pingInterval, pingTimeout, pingFailures = 50*time.Millisecond, 50*time.Millisecond, 3
	h := newHarness(t)
	host := h.host(&Options{Restart: RestartPolicy{MaxAttempts: 1, Backoff: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Stable: time.Hour}})
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	first := h.pid("srv", "pid")

	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("deaf")); err != nil {
		t.Fatalf("the deaf call: %v", err)
	}
	pollUntil(t, "the wedged server to be restarted", func() bool {
		state, _ := c.State()
		return state == StateReady && h.pid("srv", "pid") != first
	})
	if alive(first) {
		t.Errorf("the wedged process %d still runs", first)
	}
	var reasons []string
	for _, ch := range h.rec.changesOf("srv") {
		if ch.state == StateRestarting && ch.err != nil {
			reasons = append(reasons, ch.err.Error())
		}
	}
	if len(reasons) == 0 || !strings.Contains(reasons[0], "stopped answering: 3 pings in a row") {
		t.Errorf("the restart's reason: %q, want the missed pings", reasons)
	}
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo")); err != nil {
		t.Errorf("a call after the restart: %v", err)
	}
}

// What a server asks of its client reaches Events.Request, and the answer
// (or error) reaches the server; notifications the Client does not handle
// reach Events.Notification; a ping is answered by the Client itself.
func TestServerRequestsAndNotifications(t *testing.T) {
	h := newHarness(t)
	const answer = `{"role":"assistant","content":{"type":"text","text":"sampled <&>"},"model":"m", "stopReason":"endTurn"}`
	declined := &jsonrpc.Error{Code: -1, Message: "declined by the user", Data: json.RawMessage(`{"why":"test"}`)}
	host := h.host(&Options{Events: h.rec.events(func(ctx context.Context, req requestEvent) (json.RawMessage, error) {
		if bytes.Contains(req.params, []byte(`"fail"`)) {
			return nil, declined
		}
		return json.RawMessage(answer), nil
	})})
	c := startReady(t, h, host, h.spec("srv", modeNormal))

	res, err := c.Call(ctxFor(t), "tools/call", toolArgs("sample"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[],"got":` + answer + `}`; string(res) != want {
		t.Errorf("the server got the answer\n\t%s\nwant\n\t%s", res, want)
	}
	reqs := h.rec.requests()
	if len(reqs) != 1 || reqs[0].server != "srv" || reqs[0].method != "sampling/createMessage" || string(reqs[0].params) != testSampleParams {
		t.Errorf("Events.Request saw %+v", reqs)
	}
	notes := h.rec.notifications()
	if len(notes) != 1 || notes[0].server != "srv" || notes[0].method != "notifications/message" || string(notes[0].params) != testLogParams {
		t.Errorf("Events.Notification saw %+v", notes)
	}

	// An error answer reaches the server as the error it is.
	res, err = c.Call(ctxFor(t), "tools/call", json.RawMessage(`{"name":"sample","arguments":{"fail":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[],"got":{"code":-1,"message":"declined by the user","data":{"why":"test"}}}`; string(res) != want {
		t.Errorf("the server got\n\t%s\nwant\n\t%s", res, want)
	}

	// A ping from the server is answered without bothering Events.Request.
	res, err = c.Call(ctxFor(t), "tools/call", toolArgs("ping-client"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[],"got":{}}`; string(res) != want {
		t.Errorf("ping: the server got %s, want %s", res, want)
	}
	if n := len(h.rec.requests()); n != 2 {
		t.Errorf("Events.Request saw %d requests, want 2 (the ping is not one)", n)
	}
}

// A server that cancels its own request ends the ctx Events.Request got,
// and gets no answer.
func TestServerCancelsItsRequest(t *testing.T) {
	h := newHarness(t)
	host := h.host(&Options{Events: h.rec.events(func(ctx context.Context, req requestEvent) (json.RawMessage, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(subprocWait):
			return json.RawMessage(`{}`), nil
		}
	})})
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("sample-cancel")); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the request's ctx to end", func() bool {
		reqs := h.rec.requests()
		return len(reqs) == 1 && reqs[0].cancelled
	})
	// The server reads everything before it exits: no answer to s-2 came.
	if _, err := c.Call(ctxFor(t), "tools/call", toolArgs("echo")); err != nil {
		t.Fatal(err)
	}
	if err := host.Close(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	for _, m := range h.received("srv") {
		if string(m.ID) == `"s-2"` {
			t.Errorf("the server got an answer to the requestEvent it cancelled: %+v", m)
		}
	}
}

// Without Events.Request, a server's request is answered method not found.
func TestServerRequestWithoutHandler(t *testing.T) {
	h := newHarness(t)
	host := h.host(&Options{Events: Events{Changed: func(string) {}}})
	c := startReady(t, h, host, h.spec("srv", modeNormal))
	res, err := c.Call(ctxFor(t), "tools/call", toolArgs("sample"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Got jsonrpc.Error `json:"got"`
	}
	if err := json.Unmarshal(res, &got); err != nil || got.Got.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("the server got %s, want a method-not-found error", res)
	}
}
