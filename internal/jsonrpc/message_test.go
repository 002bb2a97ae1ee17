package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestHasID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"", false},
		{"null", false},
		{"0", true},
		{"1", true},
		{`"abc"`, true},
		{`""`, true},
		{"12345678901234567890", true},
	} {
		var id json.RawMessage
		if tc.id != "" {
			id = json.RawMessage(tc.id)
		}
		if got := hasID(id); got != tc.want {
			t.Errorf("hasID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestMessageKinds(t *testing.T) {
	for _, tc := range []struct {
		line          string
		request, note bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"m"}`, true, false},
		{`{"jsonrpc":"2.0","id":"abc","method":"m","params":{}}`, true, false},
		{`{"jsonrpc":"2.0","method":"m"}`, false, true},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, false, true}, // null id: a notification
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, false, false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, false, false},
		{`{}`, false, false},
	} {
		var m message
		if err := json.Unmarshal([]byte(tc.line), &m); err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if m.isRequest() != tc.request || m.isNotification() != tc.note {
			t.Errorf("%s: isRequest=%v isNotification=%v, want %v %v", tc.line, m.isRequest(), m.isNotification(), tc.request, tc.note)
		}
	}
}

func TestMessageKeepsRawMembers(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":"x","result":{"n":12345678901234567890,"s":"\u00e9<>"},"extra":1}`
	var m message
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if string(m.ID) != `"x"` || string(m.Result) != `{"n":12345678901234567890,"s":"\u00e9<>"}` {
		t.Errorf("decoded id %s result %s", m.ID, m.Result)
	}
}

func TestAppendRequest(t *testing.T) {
	for _, tc := range []struct {
		id     json.RawMessage
		method string
		params json.RawMessage
		want   string
	}{
		{json.RawMessage(`1`), "tools/list", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{json.RawMessage(`2`), "tools/call", json.RawMessage(`{"a":[1]}`), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"a":[1]}}`},
		{json.RawMessage(`"s"`), "m", json.RawMessage(`{}`), `{"jsonrpc":"2.0","id":"s","method":"m","params":{}}`},
		{nil, "notifications/initialized", nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{nil, "n", json.RawMessage("{\n \"a\": 1\n}"), `{"jsonrpc":"2.0","method":"n","params":{"a":1}}`},
		{nil, "n", json.RawMessage(`{}`), `{"jsonrpc":"2.0","method":"n","params":{}}`},
	} {
		got := appendRequest(nil, tc.id, tc.method, tc.params)
		if string(got) != tc.want+"\n" {
			t.Errorf("appendRequest(%s, %q, %s)\n got: %q\nwant: %q", tc.id, tc.method, tc.params, got, tc.want+"\n")
		}
	}
	// Appends to what is already there.
	if got := appendRequest([]byte("prefix"), nil, "m", nil); string(got) != `prefix{"jsonrpc":"2.0","method":"m"}`+"\n" {
		t.Errorf("appendRequest did not append: %q", got)
	}
}

func TestAppendResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		id     string
		result json.RawMessage
		err    *Error
		want   string
	}{
		{"result", `1`, json.RawMessage(`{"a":1}`), nil, `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`},
		{"nil result", `1`, nil, nil, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"null result", `1`, json.RawMessage(`null`), nil, `{"jsonrpc":"2.0","id":1,"result":null}`},
		{"string id", `"abc"`, json.RawMessage(`[]`), nil, `{"jsonrpc":"2.0","id":"abc","result":[]}`},
		{"pretty result", `1`, json.RawMessage("{\r\n\t\"a\" : [ 1 ]\r\n}"), nil, `{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}`},
		{"invalid multi-line result", `1`, json.RawMessage("{\n oops"), nil, `{"jsonrpc":"2.0","id":1,"result":null}`},
		{"error", `1`, nil, Errorf(CodeMethodNotFound, "no %s", "x"), `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no x"}}`},
		{"error wins over result", `1`, json.RawMessage(`1`), Errorf(1, "e"), `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"e"}}`},
		{
			"error data kept byte for byte", `2`, nil,
			&Error{Code: -32000, Message: "a <b> & c", Data: json.RawMessage(`{"h":"<p>&amp;</p>","u":"\u00e9","n":12345678901234567890}`)},
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"a <b> & c","data":{"h":"<p>&amp;</p>","u":"\u00e9","n":12345678901234567890}}}`,
		},
		{
			"pretty error data compacted", `3`, nil,
			&Error{Code: 1, Message: "m", Data: json.RawMessage("[\n  1,\n  2\n]")},
			`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m","data":[1,2]}}`,
		},
		{
			"invalid error data dropped", `4`, nil,
			&Error{Code: 1, Message: "m", Data: json.RawMessage(`{nope`)},
			`{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendResponse(nil, json.RawMessage(tc.id), tc.result, tc.err)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want+"\n" {
				t.Errorf("\n got: %q\nwant: %q", got, tc.want+"\n")
			}
			if !json.Valid(bytes.TrimSuffix(got, []byte("\n"))) {
				t.Errorf("not valid JSON: %q", got)
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "tools/list", "notifications/cancelled", `q"uote`, `back\slash`, "new\nline", "\x00\x1f", "ünïcode", "\u2028", "<&>", "\xff invalid utf8"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("appendString(%q) = %q: not a JSON string: %v", s, got, err)
			continue
		}
		if back != strings.ToValidUTF8(s, "\uFFFD") {
			t.Errorf("appendString(%q) decodes to %q", s, back)
		}
		if bytes.ContainsAny(got, "\n\r") {
			t.Errorf("appendString(%q) = %q contains a line break", s, got)
		}
	}
	if got := appendString([]byte("x"), "a/b"); string(got) != `x"a/b"` {
		t.Errorf("plain ASCII fast path = %q", got)
	}
}

func TestAppendRaw(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{ "a" : 1 }`, `{ "a" : 1 }`}, // single line: copied as is
		{`"\u00e9<>&"`, `"\u00e9<>&"`},
		{"{\n\"a\":\n1\n}", `{"a":1}`},
		{"{\r\"a\":1}", `{"a":1}`},
		{"[\n\"x\\ny\", \"<&>\"\n]", `["x\ny","<&>"]`},
		{"{\nbroken", `null`},
	} {
		if got := appendRaw(nil, json.RawMessage(tc.in)); string(got) != tc.want {
			t.Errorf("appendRaw(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzAppendRawKeepsFraming(f *testing.F) {
	for _, s := range []string{`{}`, "{\n}", `{"a":[1,2,{"b":"\n"}]}`, "[\r\n1,\r\n2]", `"x"`, "{\n  \"k\": \"v\"\n}", "\n1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := appendRaw(nil, json.RawMessage(in))
		if bytes.ContainsAny(got, "\n\r") {
			t.Fatalf("appendRaw(%q) = %q breaks the line framing", in, got)
		}
		if json.Valid([]byte(in)) {
			var want bytes.Buffer
			_ = json.Compact(&want, []byte(in))
			var gotC bytes.Buffer
			if err := json.Compact(&gotC, got); err != nil || !bytes.Equal(gotC.Bytes(), want.Bytes()) {
				t.Fatalf("appendRaw(%q) = %q changed the value", in, got)
			}
		}
	})
}

func TestAsError(t *testing.T) {
	e := &Error{Code: 5, Message: "five", Data: json.RawMessage(`1`)}
	if AsError(e) != e {
		t.Error("AsError(*Error) is not the same *Error")
	}
	if AsError(fmt.Errorf("a: %w", fmt.Errorf("b: %w", e))) != e {
		t.Error("AsError did not find the *Error in the chain")
	}
	got := AsError(fmt.Errorf("reading: %w", io.EOF))
	if got.Code != CodeInternalError || got.Message != "reading: EOF" || got.Data != nil {
		t.Errorf("AsError(plain) = %+v", got)
	}
	var target *Error
	if !errors.As(error(e), &target) || target != e {
		t.Error("*Error does not satisfy errors.As")
	}
}

func TestErrorText(t *testing.T) {
	if got := Errorf(CodeInvalidParams, "bad %s %d", "x", 3).Error(); got != "bad x 3 (code -32602)" {
		t.Errorf("Error() = %q", got)
	}
	e := Errorf(CodeUnavailable, "down")
	if e.Code != -32000 || e.Message != "down" || e.Data != nil {
		t.Errorf("Errorf = %+v", e)
	}
}

func TestErrorJSONShape(t *testing.T) {
	b, err := json.Marshal(&Error{Code: 1, Message: "m"})
	if err != nil || string(b) != `{"code":1,"message":"m"}` {
		t.Errorf("Error without data marshals as %s, %v", b, err)
	}
	var e Error
	if err := json.Unmarshal([]byte(`{"code":-32800,"message":"cancelled","data":{"x":[1]}}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != CodeRequestCancelled || e.Message != "cancelled" || string(e.Data) != `{"x":[1]}` {
		t.Errorf("decoded %+v", e)
	}
}

func TestBuffers(t *testing.T) {
	b := getBuf(10)
	if len(b) != 0 {
		t.Errorf("getBuf returned %d bytes of content", len(b))
	}
	b = append(b, "something"...)
	putBuf(b)
	if b := getBuf(10); len(b) != 0 {
		t.Errorf("reused buffer not reset: %q", b)
	}
	big := getBuf(maxPooled)
	if len(big) != 0 || cap(big) < maxPooled+frameOverhead {
		t.Errorf("getBuf(maxPooled) = len %d cap %d", len(big), cap(big))
	}
	putBuf(big) // dropped, not pooled: must not panic
	putBuf(nil)
}

// A frame buffer taken and given back costs no allocation once the pools
// are warm: putBuf once boxed every slice it pooled, one allocation per
// message written.
func TestBuffersDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	putBuf(getBuf(10))
	if n := testing.AllocsPerRun(1000, func() {
		b := append(getBuf(10), "frame"...)
		putBuf(b)
	}); n != 0 {
		t.Errorf("getBuf+putBuf: %v allocations, want 0", n)
	}
}
