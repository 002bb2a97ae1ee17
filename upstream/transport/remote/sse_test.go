package remote

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadSSE(t *testing.T) {
	in := ": comment\r\n" +
		"retry: 1500\n" +
		"id: 7\n" +
		"\n" + // an id-only event (priming)
		"event: endpoint\n" +
		"data: /message?x=1\r\n" +
		"\r\n" +
		"data: {\"a\":\n" +
		"data:  1}\n" +
		"id: 8\n" +
		"\n" +
		"event: custom\n" +
		"data\n" +
		"\n" +
		"data: unfinished"
	var got []sseEvent
	if err := readSSE(strings.NewReader(in), 0, func(ev sseEvent) bool { got = append(got, ev); return true }); err != nil {
		t.Fatal(err)
	}
	want := []sseEvent{
		{name: "message", id: "7", hasID: true, retry: 1500 * time.Millisecond, hasRetry: true},
		{name: "endpoint", data: []byte("/message?x=1")},
		{name: "message", data: []byte("{\"a\":\n 1}"), id: "8", hasID: true},
		{name: "custom", data: []byte("")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	// Stopping early.
	n := 0
	_ = readSSE(strings.NewReader(in), 0, func(sseEvent) bool { n++; return false })
	if n != 1 {
		t.Errorf("fn called %d times after asking to stop", n)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:              "{\"a\":1}",
		"{\n  \"a\": 1\n}":     "{\"a\":1}",
		"not\njson":            "not json",
		"{\"s\":\"x\\ny\"}":    "{\"s\":\"x\\ny\"}",
		"{\r\n\"b\": [1,\n2]}": "{\"b\":[1,2]}",
	} {
		if got := string(oneLine([]byte(in))); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
