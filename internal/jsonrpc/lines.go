package jsonrpc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
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

// LineReader reads lines of at most a limit, bounded in memory whatever
// the peer writes: the Conn's reader, and the event-stream reader of the
// HTTP transports.
type LineReader struct {
	src   io.Reader
	r     *bufio.Reader // reading now: small, or a large buffer while a long line is read
	small *bufio.Reader // the buffer a reader waiting for its next line holds
	tail  ring
}

// A LineReader waits for each line with a small buffer, which is all an
// idle connection holds: an idle server's, or the session of a stateless
// HTTP request, which reads that one request. A line that does not fit is
// read on with a large buffer taken from a pool, given back once what it
// read has been returned, so a server that sent one long list does not
// keep a large buffer while it idles, and a stream of long results reuses
// a few of them. A line longer than the large buffer is read in fragments
// and joined.
const (
	smallestReadBuffer = 4 << 10
	largestReadBuffer  = 64 << 10
)

// NewLineReader returns a LineReader reading r.
func NewLineReader(r io.Reader) *LineReader {
	br := smallReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return &LineReader{src: r, r: br, small: br}
}

// smallReaders recycles the small read buffers, which a stateless HTTP
// request's session (one short line through a Conn of its own) would
// otherwise allocate afresh; largeReaders the large ones between long
// lines. Every line next returns is a copy, so a buffer can serve another
// reader once its own has given it back.
var (
	smallReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, smallestReadBuffer) }}
	largeReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, largestReadBuffer) }}
)

// release gives the read buffers back for other LineReaders: nothing may
// be read through lr after.
func (lr *LineReader) release() {
	if lr.r != lr.small {
		lr.r.Reset(nil)
		largeReaders.Put(lr.r)
	}
	lr.small.Reset(nil)
	smallReaders.Put(lr.small)
	lr.r, lr.small = nil, nil
}

// grow goes on reading with a large buffer. It is called when ReadSlice has
// returned the whole small buffer (bufio.ErrBufferFull), which leaves
// nothing buffered: the large reader goes on where the small one stopped,
// and the slice returned keeps the small buffer, which nothing writes to
// until the line has been copied out of it.
func (lr *LineReader) grow() {
	if lr.r == lr.small {
		lr.r = largeReaders.Get().(*bufio.Reader)
		lr.r.Reset(lr.src)
	}
}

// shrink gives the large buffer back once everything it read has been
// returned, and goes back to the small one.
func (lr *LineReader) shrink() {
	if lr.r != lr.small && lr.r.Buffered() == 0 {
		lr.r.Reset(nil)
		largeReaders.Put(lr.r)
		lr.r = lr.small
	}
}

// Next returns the next line, newline included, or the length of a line
// over limit bytes (read and discarded whole, never held), or the reader's
// error after the last line. limit <= 0: no limit.
func (lr *LineReader) Next(limit int) (line []byte, overSize int64, err error) {
	line, over, err := lr.next(limit, 0)
	if over != nil {
		return nil, over.size, err
	}
	return line, 0, err
}

// next returns the next line (newline included, a fresh slice the caller
// keeps), or, for a line over limit bytes (limit <= 0: no limit), what is
// left of it. resync bounds how much of an over-long line is read looking
// for its end (<= 0: no bound). err is the reader's, after the last line.
func (lr *LineReader) next(limit int, resync int64) (line []byte, over *overlong, err error) {
	// A long line is collected as copies of bufio's fragments and joined
	// once whole: what it leaves to the garbage collector is its own size,
	// where growing one slice by appending would leave several times that.
	lr.shrink()
	var frags [][]byte
	n := 0
	for {
		frag, err := lr.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			lr.grow()
		}
		if over == nil && (limit <= 0 || n+len(frag) <= limit) {
			if frags == nil && err == nil {
				return append(make([]byte, 0, len(frag)), frag...), nil, nil
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				frags = append(frags, append(make([]byte, 0, len(frag)), frag...))
				n += len(frag)
				continue
			}
			line = make([]byte, 0, n+len(frag))
			for _, f := range frags {
				line = append(line, f...)
			}
			return append(line, frag...), nil, err
		}
		if over == nil {
			first := frag
			if len(frags) > 0 {
				first = frags[0]
			}
			over = &overlong{head: append([]byte(nil), first[:min(len(first), edgeBytes)]...), size: int64(n)}
			frags = nil // the collected part goes to the garbage collector now
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
