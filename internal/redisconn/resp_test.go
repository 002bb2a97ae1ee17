package redisconn

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func read(s string) (any, error) {
	return readReply(bufio.NewReaderSize(strings.NewReader(s), readBuffer))
}

// TestReadReply: each RESP2 type, nested arrays with nils and errors.
func TestReadReply(t *testing.T) {
	for _, c := range []struct {
		in   string
		want any
	}{
		{"+OK\r\n", "OK"},
		{"-ERR bad\r\n", Error("ERR bad")},
		{":-42\r\n", int64(-42)},
		{"$5\r\na\r\nb!\r\n", []byte("a\r\nb!")},
		{"$0\r\n\r\n", []byte{}},
		{"$-1\r\n", nil},
		{"*-1\r\n", nil},
		{"*0\r\n", []any{}},
		{"*3\r\n:1\r\n$-1\r\n*2\r\n+x\r\n-E y\r\n", []any{int64(1), nil, []any{"x", Error("E y")}}},
	} {
		got, err := read(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q read as %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
}

// TestReadReplyRefusesHostileInput: what is not RESP2, or declares more
// than the bounds allow, is a ProtocolError, read without allocating
// what it declares; a cut reply is io.ErrUnexpectedEOF.
func TestReadReplyRefusesHostileInput(t *testing.T) {
	for _, in := range []string{
		"",
		"\r\n",
		"?what\r\n",
		"+OK\n",
		":12x\r\n",
		"$-2\r\n",
		"$67108865\r\n",
		"$9223372036854775807\r\n",
		"*1048577\r\n",
		"*-5\r\n",
		"$3\r\nabcd\r\n",
		strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n",
		"+" + strings.Repeat("x", readBuffer) + "\r\n",
		"$5\r\nab",
		"$70000\r\nab",
		"*2\r\n:1\r\n",
	} {
		v, err := read(in)
		var pe *ProtocolError
		if err == nil || !(errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF) || (in == "" && errors.Is(err, io.EOF))) {
			t.Errorf("%.40q read as %#v, %v; want a protocol error or an unexpected EOF", in, v, err)
		}
	}
	if _, err := read(strings.Repeat("*1\r\n", maxDepth) + ":1\r\n"); err != nil {
		t.Errorf("arrays nested %d deep: %v", maxDepth, err)
	}
}

// TestAppendCommand: arguments are bulk strings, numbers in decimal.
func TestAppendCommand(t *testing.T) {
	got, err := appendCommand(nil, []any{"SET", []byte("k\r\n"), 7, int64(-1), uint64(8), 1.5, true})
	want := "*7\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$1\r\n7\r\n$2\r\n-1\r\n$1\r\n8\r\n$3\r\n1.5\r\n$1\r\n1\r\n"
	if err != nil || string(got) != want {
		t.Errorf("appendCommand = %q, %v; want %q", got, err, want)
	}
}

// FuzzReadReply: no input makes the parser panic, hang or allocate past
// its bounds, and what it accepts it gives back whole.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n:1\r\n*1\r\n$0\r\n\r\n", "*1\r\n*1\r\n*1\r\n+\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := readReply(bufio.NewReaderSize(strings.NewReader(string(in)), readBuffer))
		if err != nil {
			return
		}
		if n := size(v); n > len(in) {
			t.Errorf("a reply of %d bytes of data from %d bytes of input", n, len(in))
		}
	})
}

// size is the bytes of data in v.
func size(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case Error:
		return len(v)
	case []byte:
		return len(v)
	case []any:
		n := 0
		for _, e := range v {
			n += size(e)
		}
		return n
	}
	return 0
}
