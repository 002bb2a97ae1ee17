package jsonrpc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// scanMessage is a fast path: whenever it answers, the answer must be what
// json.Unmarshal into a message gives, and decodeMessage must always give
// what json.Unmarshal gives.

var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"echo","arguments":{}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no","data":{"x":[1]}}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":1.5,"message":"no"}}`, `{"id":3,"error":5}`, `{"id":3,"error":"x"}`,
	`{"id":null,"params":null,"result":null,"error":null,"method":null}`, `{"id":1,"ID":2}`, `{"Id":3}`, `{"METHOD":"x"}`,
	`{"error":{"code":1},"error":{"message":"x"}}`, `{"id":1,"id":2}`, `{"method":5}`, `{"method":"\u0041"}`, `{"method":"é"}`,
	`{"\u0069d":4}`, `{"íd":4}`, `{}`, ` {} `, "{}\n", "\t{\"id\":1,\"result\":{}}\r\n", `[]`, `null`, `1`, `"x"`, ``, `{`,
	`{"id":1,"result":{}}x`, `{"id":1,"result":{}}{}`, `{"id":1,"result":{},}`, `{"id":01}`, `{"id":-}`, `{"id":1.5e3}`,
	`{"id":1,"result":"bad \u12"}`, `{"id":1,"result":"\x"}`, `{"id":1,"result":"` + "\x01" + `"}`, `{"id":1,"result":"` + "\xff" + `"}`,
	`{"id":1,"result":[[[[[[{"a":[true,false,null]}]]]]]]}`, `{"id":1,"result":tru}`, `{"id":1 "result":2}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":2,"id":1}`, `{"jsonrpc":null,"id":1}`, `{"JSONRPC":"2.0","id":1}`,
	`{"jsonrpc":"\u0032.0","id":1}`, `{"jsonrpc":"2.0","jsonrpc":"2.0"}`, `{"jsonrpc":"é"}`, `{"jsonrpc":""}`,
}

func FuzzScanMessageMatchesUnmarshal(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkScanMessage(t, []byte(line))
	})
}

func TestScanMessageMatchesUnmarshal(t *testing.T) {
	for _, s := range envelopeSeeds {
		checkScanMessage(t, []byte(s))
	}
}

func checkScanMessage(t *testing.T, line []byte) {
	t.Helper()
	var want message
	wantErr := json.Unmarshal(line, &want)
	if got, ok := scanMessage(line); ok {
		if wantErr != nil {
			t.Fatalf("scanMessage(%q) accepted what json.Unmarshal rejects: %v", line, wantErr)
		}
		if !sameMessage(got, want) {
			t.Fatalf("scanMessage(%q) = %+v; json.Unmarshal: %+v", line, got, want)
		}
	}
	got, err := decodeMessage(line)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("decodeMessage(%q) error %v; json.Unmarshal: %v", line, err, wantErr)
	}
	if err == nil && !sameMessage(got, want) {
		t.Fatalf("decodeMessage(%q) = %+v; json.Unmarshal: %+v", line, got, want)
	}
}

// sameMessage compares members by content (nil and empty raw members are
// both "absent").
func sameMessage(a, b message) bool {
	return a.JSONRPC == b.JSONRPC && string(a.ID) == string(b.ID) && a.Method == b.Method && string(a.Params) == string(b.Params) &&
		string(a.Result) == string(b.Result) && reflect.DeepEqual(a.Error, b.Error)
}

// The members scanMessage returns are capped: appending to one cannot write
// over the line after it.
func TestScanMessageMembersAreCapped(t *testing.T) {
	line := []byte(`{"params":{"a":1},"id":7,"method":"m"}`)
	m, ok := scanMessage(line)
	if !ok {
		t.Fatal("scanMessage declined a plain request")
	}
	_ = append(m.Params, `XXXXXXXX`...)
	_ = append(m.ID, `XXXXXXXX`...)
	if string(line) != `{"params":{"a":1},"id":7,"method":"m"}` || string(m.ID) != "7" {
		t.Errorf("an append changed the line: %s", line)
	}
}

// Long strings cross the 8-byte stride with every kind of byte at every
// offset.
func TestScanMessageLongStrings(t *testing.T) {
	for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, "é", "\x01", `"`, "\xff", `\x`} {
		for pos := range 17 {
			text := strings.Repeat("a", pos) + special + strings.Repeat("b", 20)
			checkScanMessage(t, []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"`+text+`"}}`))
			checkScanMessage(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+text+`"}`))
		}
	}
}
