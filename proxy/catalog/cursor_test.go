package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, after := range []string{
		"a",
		"mcp__files__read_file",
		"mcptrunk://files/file:///a b/c?d=e&f=<g>#h",
		"mcptrunk://srv/demo://r/{id}",
		"\u65e5\u672c\u8a9e \u2028 \x00 \xff",
		strings.Repeat("x", 1000),
		"?>~", // bytes whose standard base64 has '+' and '/'
	} {
		c := encodeCursor(after)
		if strings.ContainsAny(c, "+/= \n") {
			t.Errorf("encodeCursor(%q) = %q: not URL-safe unpadded base64", after, c)
		}
		got, err := decodeCursor(c)
		if err != nil || got != after {
			t.Errorf("decodeCursor(encodeCursor(%q)) = %q, %v", after, got, err)
		}
	}
	// Documented: encoding/base64 skips '\r' and '\n', so a cursor a host
	// wrapped or terminated with a newline still decodes.
	if got, err := decodeCursor("YW\nJj\r\n"); err != nil || got != "abc" {
		t.Errorf("decodeCursor with newlines = %q, %v; want \"abc\"", got, err)
	}
	if c := encodeCursor("?>~"); c != "Pz5-" {
		t.Errorf(`encodeCursor("?>~") = %q, want "Pz5-"`, c)
	}
}

func TestDecodeCursorInvalid(t *testing.T) {
	for _, cursor := range []string{
		"!!!",
		"a",     // a single base64 character is never a whole byte
		"YQ==",  // padding is not used
		"Pz5+",  // standard, not URL, alphabet
		"YW Jj", // embedded space
		"%2F",
	} {
		got, err := decodeCursor(cursor)
		if err == nil {
			t.Errorf("decodeCursor(%q) = %q, want an error", cursor, got)
			continue
		}
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
			t.Errorf("decodeCursor(%q) error = %#v, want a *jsonrpc.Error with code -32602", cursor, err)
			continue
		}
		if !strings.Contains(rpcErr.Message, "cursor") {
			t.Errorf("decodeCursor(%q) message %q does not say what was wrong", cursor, rpcErr.Message)
		}
	}
}
