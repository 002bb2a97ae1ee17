package jsonrpc

import "sync"

// Frames are assembled in pooled buffers: small messages dominate MCP
// traffic and a fresh allocation per message shows up in profiles.
const (
	frameOverhead = 128     // envelope, id and method around the payload
	maxPooled     = 1 << 20 // larger buffers are left to the GC
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuf(payload int) []byte {
	if payload+frameOverhead > maxPooled {
		return make([]byte, 0, payload+frameOverhead)
	}
	b := *bufPool.Get().(*[]byte)
	return b[:0]
}

func putBuf(b []byte) {
	if cap(b) > maxPooled {
		return
	}
	b = b[:0]
	bufPool.Put(&b)
}
