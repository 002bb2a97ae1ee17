package refhop

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// The child's answers must pass through the relay's process, as they pass
// through the trunk's: the child's stdout is a pipe to the relay, not the
// relay's own stdout handed down.
func TestByteRelayAnswersPassThroughIt(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	relayOut, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- ByteRelay([]string{"sh", "-c", "readlink /proc/self/fd/1"}, strings.NewReader(""), w)
		w.Close()
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	childOut := strings.TrimSpace(string(got))
	if !strings.HasPrefix(childOut, "pipe:") {
		t.Fatalf("the child's stdout is %q, want a pipe", childOut)
	}
	if childOut == relayOut {
		t.Errorf("the child writes straight to the relay's stdout (%s)", relayOut)
	}
}
