package redisconn

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Bounds on what a reply may declare, so that a hostile or broken server
// can make the parser neither panic nor allocate without bound: a line
// (simple string, error, length) fits the reader's buffer, a bulk string
// holds at most maxBulk bytes and is allocated as its bytes arrive, an
// array holds at most maxArray elements and nests at most maxDepth deep.
const (
	readBuffer = 16 << 10
	maxBulk    = 64 << 20
	maxArray   = 1 << 20
	maxDepth   = 8
)

// ProtocolError is a reply that is not RESP2 or breaks the bounds above.
// The connection it came from is closed.
type ProtocolError struct{ msg string }

func (e *ProtocolError) Error() string { return "redis: protocol error: " + e.msg }

func protocolErrorf(format string, args ...any) error {
	return &ProtocolError{msg: fmt.Sprintf(format, args...)}
}

// readReply reads one reply: a string for a simple string, an int64 for
// an integer, []byte for a bulk string, []any for an array, nil for a nil
// bulk string or array, and Error for an error reply (at the top, as
// within an array, a value: the caller makes it an error).
func readReply(br *bufio.Reader) (any, error) { return readValue(br, 0) }

func readValue(br *bufio.Reader, depth int) (any, error) {
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, protocolErrorf("an empty line")
	}
	switch line[0] {
	case '+':
		return string(line[1:]), nil
	case '-':
		return Error(line[1:]), nil
	case ':':
		return parseInt(line[1:])
	case '$':
		n, err := parseInt(line[1:])
		switch {
		case err != nil:
			return nil, err
		case n == -1:
			return nil, nil
		case n < 0 || n > maxBulk:
			return nil, protocolErrorf("a bulk string of %d bytes", n)
		}
		return readBulk(br, int(n))
	case '*':
		n, err := parseInt(line[1:])
		switch {
		case err != nil:
			return nil, err
		case n == -1:
			return nil, nil
		case n < 0 || n > maxArray:
			return nil, protocolErrorf("an array of %d elements", n)
		case depth >= maxDepth:
			return nil, protocolErrorf("arrays nested more than %d deep", maxDepth)
		}
		elems := make([]any, 0, min(n, 64))
		for range n {
			v, err := readValue(br, depth+1)
			if err != nil {
				return nil, unexpected(err)
			}
			elems = append(elems, v)
		}
		return elems, nil
	}
	return nil, protocolErrorf("a reply of type %q", line[0])
}

// readLine is the next line without its CRLF; the slice is valid until
// the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, protocolErrorf("a line longer than %d bytes", readBuffer)
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, protocolErrorf("a line not ended by CRLF")
	}
	return line[:len(line)-2], nil
}

func parseInt(b []byte) (int64, error) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, protocolErrorf("%q is not an integer", b)
	}
	return n, nil
}

// readBulk reads n bytes and their CRLF. Up to readBuffer bytes are
// allocated at once; a longer string grows as its bytes arrive, so that
// a declared length the server does not send costs nothing.
func readBulk(br *bufio.Reader, n int) ([]byte, error) {
	var b []byte
	if n <= readBuffer {
		b = make([]byte, n+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, unexpected(err)
		}
	} else {
		var buf bytes.Buffer
		if _, err := io.CopyN(&buf, br, int64(n)+2); err != nil {
			return nil, unexpected(err)
		}
		b = buf.Bytes()
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, protocolErrorf("a bulk string not ended by CRLF")
	}
	return b[:n:n], nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// appendCommand appends args as a RESP2 array of bulk strings: strings,
// byte slices, integers, floats and booleans (1 or 0).
func appendCommand(buf []byte, args []any) ([]byte, error) {
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(args)), 10)
	buf = append(buf, '\r', '\n')
	for i, a := range args {
		var s []byte
		var tmp [32]byte
		switch v := a.(type) {
		case string:
			buf = appendBulk(buf, v)
			continue
		case []byte:
			s = v
		case int:
			s = strconv.AppendInt(tmp[:0], int64(v), 10)
		case int64:
			s = strconv.AppendInt(tmp[:0], v, 10)
		case int32:
			s = strconv.AppendInt(tmp[:0], int64(v), 10)
		case uint64:
			s = strconv.AppendUint(tmp[:0], v, 10)
		case uint32:
			s = strconv.AppendUint(tmp[:0], uint64(v), 10)
		case float64:
			s = strconv.AppendFloat(tmp[:0], v, 'f', -1, 64)
		case bool:
			s = []byte{'0'}
			if v {
				s[0] = '1'
			}
		default:
			return nil, fmt.Errorf("redis: argument %d is a %T, not a string, []byte, integer, float or bool", i+1, a)
		}
		buf = appendBulk(buf, s)
	}
	return buf, nil
}

func appendBulk[T string | []byte](buf []byte, s T) []byte {
	buf = append(buf, '$')
	buf = strconv.AppendInt(buf, int64(len(s)), 10)
	buf = append(buf, '\r', '\n')
	buf = append(buf, s...)
	return append(buf, '\r', '\n')
}
