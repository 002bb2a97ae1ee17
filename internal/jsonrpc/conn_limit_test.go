package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// textResult is a tool result whose encoded form is about n bytes.
func textResult(n int) json.RawMessage {
	return json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", n) + `"}]}`)
}

// On a Conn with a message limit no line over it is written: an answer
// becomes an error response saying how large it was; requests and
// notifications are refused to their sender. Both the in-place path for
// large payloads and the framed path for small ones are covered.
func TestMessageLimit(t *testing.T) {
	leakCheck(t)
	for _, size := range []int{2 << 10, 2 << 20} { // framed, and written in place
		limit := size / 2
		answers := map[string]json.RawMessage{"small": textResult(10), "big": textResult(size)}
		h := handlerFuncs{req: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
			return answers[method], nil
		}}
		p := newRawPeer(t, h, nil)
		p.c.SetMaxMessageBytes(limit, "test.limit")

		p.send(`{"jsonrpc":"2.0","id":1,"method":"big"}`)
		line := p.readLine()
		var m wireMsg
		if err := json.Unmarshal(line, &m); err != nil || m.Error == nil || m.Error.Code != CodeInternalError ||
			!strings.Contains(m.Error.Message, "test.limit") || string(m.ID) != "1" {
			t.Fatalf("size %d: an oversized answer was sent as %.200q, want an error response naming the limit", size, line)
		}
		if len(line) > limit {
			t.Errorf("size %d: the error response itself is %d bytes", size, len(line))
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"small"}`)
		if line := p.readLine(); !strings.Contains(string(line), `"id":2,"result"`) {
			t.Fatalf("size %d: the next answer was %q", size, line)
		}

		big := textResult(size)
		var tooLarge *TooLargeError
		if err := p.c.Notify("notifications/message", big); !errors.As(err, &tooLarge) || tooLarge.Limit != limit || tooLarge.Size <= limit {
			t.Errorf("size %d: Notify of an oversized notification = %v, want a *TooLargeError", size, err)
		}
		if _, err := p.c.Call(testCtx(t), "sampling/createMessage", big); !errors.As(err, &tooLarge) {
			t.Errorf("size %d: Call with oversized params = %v, want a *TooLargeError", size, err)
		}
		// A message exactly at the limit goes out.
		exact := `{"jsonrpc":"2.0","method":"n","params":` + `""` + "}\n"
		p.c.SetMaxMessageBytes(len(exact), "test.limit")
		if err := p.c.Notify("n", json.RawMessage(`""`)); err != nil {
			t.Errorf("size %d: a message of exactly the limit was refused: %v", size, err)
		}
		if line := p.readLine(); string(line) != exact {
			t.Errorf("size %d: wrote %q, want %q", size, line, exact)
		}
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
		if rest := p.rest(); len(rest) != 0 {
			t.Errorf("size %d: oversized messages were written: %d lines", size, len(rest))
		}
	}
}
