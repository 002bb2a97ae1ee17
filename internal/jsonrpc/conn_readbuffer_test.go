package jsonrpc

import (
	"bytes"
	"strings"
	"testing"
)

// A LineReader's buffer starts small, which is all an idle connection
// holds; a line that does not fit is read whole and doubles the buffer, up
// to its largest size, and every line comes back as it was written.
func TestLineReaderBufferGrowsWithItsLines(t *testing.T) {
	lines := []string{"short\n", strings.Repeat("a", 5000) + "\n", "x\n", strings.Repeat("b", 200000) + "\n", "last"}
	lr := NewLineReader(strings.NewReader(strings.Join(lines, "")))
	sizes := []int{smallestReadBuffer, 2 * smallestReadBuffer, 2 * smallestReadBuffer, largestReadBuffer, largestReadBuffer}
	for i, want := range lines {
		got, over, err := lr.Next(0)
		if over != 0 || (err != nil && i < len(lines)-1) {
			t.Fatalf("line %d: over %d, err %v", i, over, err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Errorf("line %d: %d bytes %.20q..., want %d bytes %.20q...", i, len(got), got, len(want), want)
		}
		if lr.r.Size() != sizes[i] {
			t.Errorf("after line %d (%d bytes) the buffer is %d bytes, want %d", i, len(want), lr.r.Size(), sizes[i])
		}
	}
}
