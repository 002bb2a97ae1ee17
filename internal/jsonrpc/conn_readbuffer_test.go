package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A Conn with a read buffer far smaller than its lines reads each whole:
// the buffer bounds what it holds while it waits, not what it reads.
func TestSmallReadBufferReadsLongLines(t *testing.T) {
	leakCheck(t)
	long := strings.Repeat("x", 5000)
	in := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"` + long + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"short"}}` + "\n"
	var out bytes.Buffer
	h := handlerFuncs{req: func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) { return params, nil }}
	c := NewConn(strings.NewReader(in), &out, h, &Options{ReadBufferBytes: 64})
	if c.lines.r.Size() != 64 {
		t.Fatalf("read buffer %d bytes, want 64", c.lines.r.Size())
	}
	if err := c.Serve(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":1,"result":{"text":"` + long + `"}`, `"id":2,"result":{"text":"short"}`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no answer with %.60q... in %.200q", want, out.String())
		}
	}
}
