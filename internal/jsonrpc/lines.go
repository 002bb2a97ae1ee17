package jsonrpc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// A peer decides how long the lines it writes are, and a reader that
// collects a line before looking at it holds the whole of it: a server
// that writes a gigabyte without a newline, or a host that sends one, would
// take the trunk (and every other server and host with it) down by memory.
// So a Conn reads each line into a buffer of at most its read limit
// (SetMaxReadBytes), and a line over the limit is not collected: its first
// and last bytes are kept (for its id), the rest is read and thrown away
// until its newline, and the Conn then goes on with the next line.
//
// A line that does not end within the resync bound (Options.ResyncBytes)
// is taken as a stream that will not come back to a message boundary (a
// server writing without end): the Conn ends, with an *OverlongLineError
// that says so, and whoever owns the stream restarts it.

// OverlongLineError is a line over a Conn's read limit. It is given to the
// Call whose response it was, when its id says so, and is the error the
// Conn ends with when the line never ended (Unending).
type OverlongLineError struct {
	// Size is the line's length, newline included; when Unending, the
	// bytes read of it before the Conn gave up.
	Size     int64
	Limit    int
	Setting  string // the setting behind Limit, for the message
	Unending bool
}

func (e *OverlongLineError) Error() string {
	if e.Unending {
		return fmt.Sprintf("the peer wrote more than %d bytes without ending the line, past the %d bytes a message may have%s: the stream cannot be resynchronised",
			e.Size, e.Limit, settingSuffix(e.Setting))
	}
	return fmt.Sprintf("the message is %d bytes, more than the %d bytes this connection reads%s", e.Size, e.Limit, settingSuffix(e.Setting))
}

// edgeBytes is how much of each end of an over-long line is kept to find
// its id: Go and Python SDKs write the id near the start, the TypeScript
// SDK writes it last.
const edgeBytes = 512

// overlong is what is left of a line over the limit.
type overlong struct {
	head, tail []byte
	size       int64
	unending   bool // the resync bound was reached before the newline
}

// lineReader reads lines of at most a limit, bounded in memory whatever
// the peer writes.
type lineReader struct {
	r    *bufio.Reader
	tail ring
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line (newline included, a fresh slice the caller
// keeps), or, for a line over limit bytes (limit <= 0: no limit), what is
// left of it. resync bounds how much of an over-long line is read looking
// for its end (<= 0: no bound). err is the reader's, after the last line.
func (lr *lineReader) next(limit int, resync int64) (line []byte, over *overlong, err error) {
	for {
		frag, err := lr.r.ReadSlice('\n')
		if over == nil && (limit <= 0 || len(line)+len(frag) <= limit) {
			if line == nil && err == nil {
				return append(make([]byte, 0, len(frag)), frag...), nil, nil
			}
			line = append(line, frag...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return line, nil, err
		}
		if over == nil {
			over = &overlong{head: append([]byte(nil), line[:min(len(line), edgeBytes)]...), size: int64(len(line))}
			if len(over.head) < edgeBytes {
				over.head = append(over.head, frag[:min(len(frag), edgeBytes-len(over.head))]...)
			}
			line = nil // the collected part goes to the garbage collector now
			lr.tail.reset()
		}
		over.size += int64(len(frag))
		lr.tail.write(frag)
		if !errors.Is(err, bufio.ErrBufferFull) {
			over.tail = lr.tail.bytes()
			return nil, over, err
		}
		if resync > 0 && over.size > resync {
			over.unending = true
			return nil, over, nil
		}
	}
}

// ring keeps the last edgeBytes bytes written to it.
type ring struct {
	buf  [edgeBytes]byte
	n    int // bytes held, up to edgeBytes
	next int // where the next byte goes
}

func (r *ring) reset() { r.n, r.next = 0, 0 }

func (r *ring) write(p []byte) {
	if len(p) >= edgeBytes {
		copy(r.buf[:], p[len(p)-edgeBytes:])
		r.n, r.next = edgeBytes, 0
		return
	}
	for len(p) > 0 {
		k := copy(r.buf[r.next:], p)
		p = p[k:]
		r.next = (r.next + k) % edgeBytes
		r.n = min(r.n+k, edgeBytes)
	}
}

// bytes returns what the ring holds, oldest first.
func (r *ring) bytes() []byte {
	if r.n < edgeBytes {
		return append([]byte(nil), r.buf[:r.n]...)
	}
	return append(append([]byte(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}
