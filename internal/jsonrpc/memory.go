package jsonrpc

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// InMemory is one end of a connected pair of Conns that talk without a
// process or a socket (NewInMemory): what its Conn writes, the other end's
// Conn reads. It lets a test put a server and its client, or the trunk and
// a host, in one process and still go through the whole JSON-RPC layer
// (framing, ids, cancellation). Its Conn serves on a goroutine of its own.
type InMemory struct {
	*Conn
	in     *memPipe // what this end reads
	out    *memPipe // what this end writes: the peer's in
	served chan struct{}
}

// NewInMemory returns two connected ends, a handled by ha and b by hb,
// both serving. Each end's Close ends both Conns; close both ends (Close
// is idempotent) so that their goroutines are gone when a test ends.
func NewInMemory(ha, hb Handler, opts *Options) (a, b *InMemory) {
	ab, ba := newMemPipe(), newMemPipe()
	a = &InMemory{in: ba, out: ab, served: make(chan struct{})}
	b = &InMemory{in: ab, out: ba, served: make(chan struct{})}
	a.Conn = NewConn(NewLineReader(a.in), NewLineWriter(a.out), ha, opts)
	b.Conn = NewConn(NewLineReader(b.in), NewLineWriter(b.out), hb, opts)
	for _, end := range []*InMemory{a, b} {
		go func() {
			defer close(end.served)
			_ = end.Conn.Serve()
		}()
	}
	return a, b
}

// Close ends the connection as a closed pipe would: both Conns read EOF
// once what was already written has been read. It waits until this end's
// Conn has stopped serving (its handlers have returned) or ctx ends.
func (m *InMemory) Close(ctx context.Context) error {
	m.out.close()
	m.in.close()
	select {
	case <-m.served:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A memPipe is a one-way in-memory byte stream with an unbounded buffer:
// a write never waits for the reader, as a write to a real pipe seldom
// does, so two peers that write to each other from their read loops cannot
// deadlock the way they could over io.Pipe.
type memPipe struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
	ready  chan struct{} // holds a token while buf has data or the pipe is closed
}

func newMemPipe() *memPipe { return &memPipe{ready: make(chan struct{}, 1)} }

func (p *memPipe) signal() {
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

func (p *memPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, io.ErrClosedPipe
	}
	p.buf.Write(b)
	p.signal()
	return len(b), nil
}

// Read returns what was written, then io.EOF once the pipe is closed and
// drained.
func (p *memPipe) Read(b []byte) (int, error) {
	for {
		p.mu.Lock()
		if p.buf.Len() > 0 {
			n, _ := p.buf.Read(b)
			if p.buf.Len() > 0 || p.closed {
				p.signal() // more for the next Read
			}
			p.mu.Unlock()
			return n, nil
		}
		if p.closed {
			p.signal()
			p.mu.Unlock()
			return 0, io.EOF
		}
		p.mu.Unlock()
		<-p.ready
	}
}

func (p *memPipe) close() {
	p.mu.Lock()
	p.closed = true
	p.signal()
	p.mu.Unlock()
}
