package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCallRoundTripKeepsRawBytes(t *testing.T) {
	leakCheck(t)
	cases := []struct{ name, raw string }{
		{"object", `{"a":1,"b":"two"}`},
		{"unicode escapes", `{"s":"caf\u00e9 \ud83d\ude00 \u2028\u2029 \u0000 \uFFFF","raw":"café 😀 ` + "\u2028" + `"}`},
		{"html characters", `{"h":"<b>&amp;</b> a>b","esc":"\u003c\u003e\u0026"}`},
		{"big numbers", `{"n":12345678901234567890,"f":1.000000000000000000000001,"e":-1.5E+308,"huge":1e400,"z":-0}`},
		{"nested", `{"a":{"b":{"c":[1,[2,[3,{"d":null}]]],"e":{}},"f":[]}}`},
		{"unknown fields", `{"content":[{"type":"hologram","x-vendor":{"k":true}}],"_meta":{"progressToken":"t"},"isError":false,"someFutureField":[1,"2",null]}`},
		{"whitespace inside", "{ \"a\" : [ 1 , 2 ] ,\t\"b\" : { } }"},
		{"duplicate keys", `{"a":1,"a":2}`},
		{"escapes", `{"p":"a\/b\"c\\d\n\t\r\b\f"}`},
		{"null", `null`},
		{"string", `"just a string"`},
		{"number", `12345678901234567890`},
		{"array", `[1,"x",{"y":[]}]`},
		{"bool", `true`},
		{"empty object", `{}`},
	}
	var gotParams sync.Map // method -> params the handler saw
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		gotParams.Store(method, bytes.Clone(params))
		i, err := strconv.Atoi(strings.TrimPrefix(method, "case/"))
		if err != nil {
			return nil, err
		}
		return json.RawMessage(cases[i].raw), nil
	}}
	p := newPair(t, echo, hb, nil)
	ctx := testCtx(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := fmt.Sprintf("case/%d", i)
			got, err := p.a.Call(ctx, method, json.RawMessage(tc.raw))
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !bytes.Equal(got, []byte(tc.raw)) {
				t.Errorf("result bytes changed\n got: %s\nwant: %s", got, tc.raw)
			}
			params, _ := gotParams.Load(method)
			if !bytes.Equal(params.([]byte), []byte(tc.raw)) {
				t.Errorf("params bytes changed\n got: %s\nwant: %s", params, tc.raw)
			}
		})
	}

	// And in the other direction, over the same pipes.
	got, err := p.b.Call(ctx, "anything", json.RawMessage(`{"n":12345678901234567890}`))
	if err != nil || string(got) != `{"n":12345678901234567890}` {
		t.Errorf("b -> a Call = %s, %v", got, err)
	}
}

func TestNilResultIsEmptyObjectAndNoParamsIsNil(t *testing.T) {
	leakCheck(t)
	var sawParams atomic.Value
	hb := handlerFuncs{req: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		sawParams.Store(params == nil)
		return nil, nil
	}}
	p := newPair(t, echo, hb, nil)
	got, err := p.a.Call(testCtx(t), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{}` {
		t.Errorf("nil result arrived as %q, want {}", got)
	}
	if v, _ := sawParams.Load().(bool); !v {
		t.Errorf("handler got non-nil params for a request sent without params")
	}
}

func TestHandlerErrorPassesThroughUnchanged(t *testing.T) {
	leakCheck(t)
	data := `{"big":12345678901234567890,"s":"caf\u00e9 <b>bad</b> & \"q\"","raw":"ü","nested":{"a":[1,{"b":null}]},"unknown":true}`
	cases := []struct {
		name     string
		err      error
		wantCode int
		wantMsg  string
		wantData string
	}{
		{
			name:     "error with raw data",
			err:      &Error{Code: -32042, Message: `tool failed: <timeout> & "quoted" ünï`, Data: json.RawMessage(data)},
			wantCode: -32042, wantMsg: `tool failed: <timeout> & "quoted" ünï`, wantData: data,
		},
		{
			name:     "wrapped error",
			err:      fmt.Errorf("while calling: %w", &Error{Code: CodeInvalidParams, Message: "bad params", Data: json.RawMessage(`[1,2,12345678901234567890]`)}),
			wantCode: CodeInvalidParams, wantMsg: "bad params", wantData: `[1,2,12345678901234567890]`,
		},
		{
			name:     "no data",
			err:      Errorf(CodeMethodNotFound, "no such method %q", "x/y"),
			wantCode: CodeMethodNotFound, wantMsg: `no such method "x/y"`,
		},
		{
			name:     "null data",
			err:      &Error{Code: 7, Message: "m", Data: json.RawMessage(`null`)},
			wantCode: 7, wantMsg: "m", wantData: `null`,
		},
		{
			name:     "string data",
			err:      &Error{Code: CodeUnavailable, Message: "gone", Data: json.RawMessage(`"<html>502 Bad Gateway</html>"`)},
			wantCode: CodeUnavailable, wantMsg: "gone", wantData: `"<html>502 Bad Gateway</html>"`,
		},
		{
			name:     "pretty-printed data is compacted",
			err:      &Error{Code: 1, Message: "m", Data: json.RawMessage("{\n  \"a\": [\n    1,\n    2\n  ]\r\n}")},
			wantCode: 1, wantMsg: "m", wantData: `{"a":[1,2]}`,
		},
		{
			name:     "plain Go error",
			err:      errors.New("disk on fire"),
			wantCode: CodeInternalError, wantMsg: "disk on fire",
		},
		{
			name:     "wrapped plain Go error",
			err:      fmt.Errorf("reading: %w", io.ErrUnexpectedEOF),
			wantCode: CodeInternalError, wantMsg: "reading: unexpected EOF",
		},
	}
	hb := handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		i, _ := strconv.Atoi(method)
		return json.RawMessage(`"must not be sent"`), cases[i].err
	}}
	p := newPair(t, echo, hb, nil)
	ctx := testCtx(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.a.Call(ctx, strconv.Itoa(i), nil)
			if got != nil {
				t.Errorf("Call returned a result %q with the error", got)
			}
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("Call error %v (%T) is not an *Error", err, err)
			}
			if rpcErr.Code != tc.wantCode {
				t.Errorf("code = %d, want %d", rpcErr.Code, tc.wantCode)
			}
			if rpcErr.Message != tc.wantMsg {
				t.Errorf("message = %q, want %q", rpcErr.Message, tc.wantMsg)
			}
			if !bytes.Equal(rpcErr.Data, []byte(tc.wantData)) {
				t.Errorf("data bytes changed\n got: %s\nwant: %s", rpcErr.Data, tc.wantData)
			}
			if !FromPeer(err) || !FromPeer(fmt.Errorf("passed on: %w", err)) {
				t.Error("the peer's answer is not FromPeer")
			}
			if FromPeer(tc.err) || FromPeer(AsError(tc.err)) {
				t.Error("an error made on this side is FromPeer")
			}
		})
	}
	// The error responses carried no result member.
	p.close()
	for _, m := range frames(t, p.bOut.bytes()) {
		if m.Error != nil && m.Result != nil {
			t.Errorf("error response also carries a result: %s", m.Result)
		}
	}
}

// An *Error whose Data is not valid JSON cannot be encoded. The caller must
// still get an answer instead of waiting forever.
func TestHandlerErrorWithInvalidDataStillAnswers(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &Error{Code: 42, Message: "broken data", Data: json.RawMessage(`{not json`)}
	}}
	p := newPair(t, echo, hb, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := p.a.Call(ctx, "x", nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("Call = %v, want a JSON-RPC error response", err)
	}
	if rpcErr.Code != 42 || rpcErr.Message != "broken data" {
		t.Errorf("error = %+v, want code 42 and the handler's message", rpcErr)
	}
}

func TestHandlerPanicBecomesInternalError(t *testing.T) {
	leakCheck(t)
	hb := handlerFuncs{req: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "panic":
			panic("handler exploded")
		case "panic-error":
			panic(errors.New("an error value"))
		case "nil-deref":
			var m map[string]*int
			return json.RawMessage(strconv.Itoa(*m["x"])), nil
		}
		return params, nil
	}}
	opts, logBuf := captureLog()
	p := newPair(t, echo, hb, opts)
	ctx := testCtx(t)
	for round := 0; round < 3; round++ {
		for _, method := range []string{"panic", "panic-error", "nil-deref"} {
			_, err := p.a.Call(ctx, method, nil)
			var rpcErr *Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInternalError {
				t.Fatalf("Call(%s) = %v, want an internal error (%d)", method, err, CodeInternalError)
			}
			if !strings.Contains(rpcErr.Message, method) {
				t.Errorf("internal error message %q does not name the method", rpcErr.Message)
			}
			got, err := p.a.Call(ctx, "ok", json.RawMessage(`{"after":"`+method+`"}`))
			if err != nil || string(got) != `{"after":"`+method+`"}` {
				t.Fatalf("connection broken after a panic: %s, %v", got, err)
			}
		}
	}
	if !strings.Contains(logBuf.String(), "handler exploded") {
		t.Errorf("panic was not logged; log:\n%s", logBuf.String())
	}
	select {
	case <-p.b.Done():
		t.Fatal("the panicking side's connection ended")
	default:
	}
}

func TestNotificationsArriveInOrder(t *testing.T) {
	leakCheck(t)
	const n = 1000
	type note struct {
		method string
		params string
	}
	collect := func(got *[]note, mu *sync.Mutex, all chan struct{}) func(string, json.RawMessage) {
		return func(method string, params json.RawMessage) {
			mu.Lock()
			defer mu.Unlock()
			*got = append(*got, note{method, string(params)})
			if len(*got) == n {
				close(all)
			}
		}
	}
	var aMu, bMu sync.Mutex
	var aGot, bGot []note
	aAll, bAll := make(chan struct{}), make(chan struct{})
	p := newPair(t,
		handlerFuncs{notif: collect(&aGot, &aMu, aAll)},
		handlerFuncs{notif: collect(&bGot, &bMu, bAll)},
		nil)

	// Both directions at once.
	var wg sync.WaitGroup
	send := func(c *Conn) {
		defer wg.Done()
		for i := 0; i < n; i++ {
			if err := c.Notify("notifications/progress", json.RawMessage(fmt.Sprintf(`{"progress":%d,"big":12345678901234567890}`, i))); err != nil {
				t.Errorf("Notify %d: %v", i, err)
				return
			}
		}
	}
	wg.Add(2)
	go send(p.a)
	go send(p.b)
	wg.Wait()
	waitClosed(t, aAll, "a to receive every notification")
	waitClosed(t, bAll, "b to receive every notification")

	check := func(side string, mu *sync.Mutex, got []note) {
		mu.Lock()
		defer mu.Unlock()
		if len(got) != n {
			t.Fatalf("%s received %d notifications, want %d", side, len(got), n)
		}
		for i, nt := range got {
			want := fmt.Sprintf(`{"progress":%d,"big":12345678901234567890}`, i)
			if nt.method != "notifications/progress" || nt.params != want {
				t.Fatalf("%s notification %d = %s %s, want %s", side, i, nt.method, nt.params, want)
			}
		}
	}
	check("a", &aMu, aGot)
	check("b", &bMu, bGot)

	// Notifications get no response.
	p.close()
	for _, m := range frames(t, p.aOut.bytes()) {
		if len(m.ID) != 0 {
			t.Errorf("a wrote a message with an id: %+v", m)
		}
	}
}

func TestConcurrentCallsEachGetTheirOwnAnswer(t *testing.T) {
	leakCheck(t)
	const n = 200
	// Every handler waits until all n are in flight at once, so responses
	// cannot come back in request order by accident.
	barrier := func() func(ctx context.Context) error {
		var arrived atomic.Int32
		all := make(chan struct{})
		return func(ctx context.Context) error {
			if arrived.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return nil
			case <-time.After(waitLimit):
				return errors.New("not all requests were handled concurrently")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	handler := func(wait func(context.Context) error) handlerFuncs {
		return handlerFuncs{req: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if err := wait(ctx); err != nil {
				return nil, err
			}
			var in struct{ N int }
			if err := json.Unmarshal(params, &in); err != nil {
				return nil, err
			}
			if in.N%7 == 0 {
				return nil, &Error{Code: 1000 + in.N, Message: method}
			}
			return json.RawMessage(fmt.Sprintf(`{"n":%d,"method":%q}`, in.N, method)), nil
		}}
	}
	p := newPair(t, handler(barrier()), handler(barrier()), nil)
	ctx := testCtx(t)

	var wg sync.WaitGroup
	run := func(c *Conn, side string) {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				method := fmt.Sprintf("%s/%d", side, i)
				got, err := c.Call(ctx, method, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
				if i%7 == 0 {
					var rpcErr *Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != 1000+i || rpcErr.Message != method {
						t.Errorf("Call %s = %s, %v; want error %d", method, got, err, 1000+i)
					}
					return
				}
				want := fmt.Sprintf(`{"n":%d,"method":%q}`, i, method)
				if err != nil || string(got) != want {
					t.Errorf("Call %s = %s, %v; want %s", method, got, err, want)
				}
			}()
		}
	}
	run(p.a, "a")
	run(p.b, "b")
	wg.Wait()
}

func TestNilOptionsAndDoneOpen(t *testing.T) {
	leakCheck(t)
	p := newPair(t, echo, echo, &Options{})
	select {
	case <-p.a.Done():
		t.Fatal("Done closed on an open Conn")
	default:
	}
	if err := p.a.Err(); err != nil {
		t.Errorf("Err() on an open Conn = %v", err)
	}
	if got, err := p.a.Call(testCtx(t), "x", json.RawMessage(`{}`)); err != nil || string(got) != "{}" {
		t.Errorf("Call = %s, %v", got, err)
	}
}
