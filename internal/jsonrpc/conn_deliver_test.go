package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Deliver dispatches a message as the read loop would, without the
// reader: requests are answered, notifications reach the handler in the
// order delivered, a response reaches its call; once the reader has ended,
// nothing more is dispatched.
func TestDeliverDispatchesWithoutTheReader(t *testing.T) {
	leakCheck(t)
	notes := make(chan string, 4)
	h := handlerFuncs{
		req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"answered ` + method + `"`), nil
		},
		notif: func(method string, _ json.RawMessage) { notes <- method },
	}
	conn, _, out, stop := servedPipes(t, h, nil)

	if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, out); !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"answered tools/list"`) {
		t.Errorf("answer %s", got)
	}
	for _, m := range []string{"first", "second", "third"} {
		if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","method":"` + m + `"}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"first", "second", "third"} {
		if got := <-notes; got != want {
			t.Errorf("notification %q, want %q: delivered in order", got, want)
		}
	}

	// A call of ours answered by a delivered response.
	answered := make(chan error, 1)
	go func() {
		res, err := conn.Call(testCtx(t), "ping", nil)
		if err == nil && string(res) != `{"pong":true}` {
			err = errors.New("result " + string(res))
		}
		answered <- err
	}()
	sent := readLine(t, out)
	if !strings.Contains(sent, `"method":"ping"`) {
		t.Fatalf("sent %s", sent)
	}
	var req struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(sent), &req); err != nil {
		t.Fatal(err)
	}
	if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"pong":true}}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-answered; err != nil {
		t.Errorf("the call answered by a delivered response: %v", err)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Deliver([]byte(`{"jsonrpc":"2.0","method":"late"}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Deliver after the reader ended: %v, want ErrClosed", err)
	}
	select {
	case m := <-notes:
		t.Errorf("%q dispatched after the reader ended", m)
	default:
	}
}

// A delivered message over the read limit is refused as a line read over
// it is: a request is answered -32600 and its handler never runs.
func TestDeliverHoldsTheReadLimit(t *testing.T) {
	leakCheck(t)
	ran := make(chan string, 1)
	h := handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		ran <- method
		return json.RawMessage(`{}`), nil
	}}
	conn, _, out, _ := servedPipes(t, h, &Options{AnswerInvalid: true, MaxReadBytes: 100, ReadLimitSetting: "trunk.maxMessageBytes"})
	long := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + strings.Repeat("x", 200) + `"}}`
	delivered := make(chan error, 1)
	go func() { delivered <- conn.Deliver([]byte(long)) }() // it answers on this goroutine, into the pipe
	got := readLine(t, out)
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"id":3`) || !strings.Contains(got, `-32600`) || !strings.Contains(got, "trunk.maxMessageBytes") {
		t.Errorf("answer to an over-long delivered request: %s", got)
	}
	select {
	case m := <-ran:
		t.Errorf("the handler ran %q for a message over the limit", m)
	default:
	}
}
