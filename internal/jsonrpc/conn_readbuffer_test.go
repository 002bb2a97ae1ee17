package jsonrpc

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
)

// chunkReader gives its chunks as a pipe gives what a peer wrote: each
// Read returns at most the rest of one chunk, and the next chunk is read
// only once the one before it has been. It records the size of the buffer
// each chunk's first Read is given: the buffer the reader waited with.
type chunkReader struct {
	chunks     []string
	started    bool
	waitedWith []int
	largest    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	if !c.started {
		c.waitedWith = append(c.waitedWith, len(p))
		c.started = true
	}
	c.largest = max(c.largest, len(p))
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; c.chunks[0] == "" {
		c.chunks, c.started = c.chunks[1:], false
	}
	return n, nil
}

// A LineReader waits for each line with its small buffer, which is all an
// idle connection holds: a line that does not fit is read on with a large
// buffer, which is given back once what it read has been returned (here a
// 10 MiB line read with the two short lines written after it), and every
// line comes back as it was written.
func TestLineReaderWaitsWithTheSmallBuffer(t *testing.T) {
	long := strings.Repeat("b", 10<<20) + "\n"
	chunks := []string{"short\n", strings.Repeat("a", 5000) + "\n", "x\n", long + "y\n" + "z\n", "last"}
	lines := []string{"short\n", strings.Repeat("a", 5000) + "\n", "x\n", long, "y\n", "z\n", "last"}
	src := &chunkReader{chunks: slices.Clone(chunks)}
	lr := NewLineReader(src)
	for i, want := range lines {
		got, over, err := lr.Next(0)
		if over != 0 || (err != nil && i < len(lines)-1) {
			t.Fatalf("line %d: over %d, err %v", i, over, err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Errorf("line %d: %d bytes %.20q..., want %d bytes %.20q...", i, len(got), got, len(want), want)
		}
	}
	want := []int{smallestReadBuffer, smallestReadBuffer, smallestReadBuffer, smallestReadBuffer, smallestReadBuffer}
	if !slices.Equal(src.waitedWith, want) {
		t.Errorf("the reader waited for each write with buffers of %v bytes, want %v", src.waitedWith, want)
	}
	if src.largest != largestReadBuffer {
		t.Errorf("the largest buffer a read was given is %d bytes, want %d (long lines read with the large buffer)", src.largest, largestReadBuffer)
	}
	if lr.r.Size() != smallestReadBuffer {
		t.Errorf("after its last line the reader holds a buffer of %d bytes, want its small one", lr.r.Size())
	}
}
