package jsonrpc

import "sync"

// Frames are assembled in pooled buffers: small messages dominate MCP
// traffic and a fresh allocation per message shows up in profiles.
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
// garbage collection. Reading a line of n bytes briefly holds 2n (bufio's
// fragments, then the line), and the GC sets its next goal at twice what
// it last found live: without a collection in between, the garbage of one
// huge message is still in the heap when the next one arrives, and the
// process peaks near 4n. Collecting once the message is handed on costs
// about a millisecond against the tens of milliseconds it takes to move
// that many bytes.
const hugeMessage = 4 << 20
