package jsonrpc

import "sync"

// Frames are assembled in pooled buffers, so that writing a message (most
// are small) allocates no frame.
const (
	frameOverhead = 128     // envelope, id and method around the payload
	maxPooled     = 1 << 20 // larger buffers are left to the GC
	// largePayload is the size from which params and results are not copied
	// into a frame buffer at all, but written from where they are between
	// the frame's head and its end (see Conn.writeSplit).
	largePayload = 64 << 10
)

// bufPool holds *[]byte (a slice in an interface would be boxed, one
// allocation per Put). boxPool keeps the emptied *[]byte boxes between a
// getBuf and the putBuf that refills one: getBuf hands out the slice alone,
// so without it every putBuf would allocate a new box, one allocation per
// message written.
var (
	bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
	boxPool = sync.Pool{New: func() any { return new([]byte) }}
)

func getBuf(payload int) []byte {
	if payload+frameOverhead > maxPooled {
		return make([]byte, 0, payload+frameOverhead)
	}
	box := bufPool.Get().(*[]byte)
	b := (*box)[:0]
	*box = nil
	boxPool.Put(box)
	return b
}

func putBuf(b []byte) {
	if cap(b) > maxPooled {
		return
	}
	box := boxPool.Get().(*[]byte)
	*box = b[:0]
	bufPool.Put(box)
}

// hugeMessage is the size from which reading a message is followed by a
// garbage collection, so that the garbage of one huge message (reading n
// bytes holds 2n: bufio's fragments, then the line) is gone before the
// next one sets the heap's goal. The trade: a peer can make the process
// collect once per 4 MiB it sends, for a peak a fifth lower on 20 MB
// results (docs/performance.md, "What library code asks of the runtime").
const hugeMessage = 4 << 20
