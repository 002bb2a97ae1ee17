package refhop

import (
	"strings"
	"testing"
)

func TestPipeEchoCopiesLines(t *testing.T) {
	var out strings.Builder
	if err := PipeEcho(strings.NewReader("a\nbb\nlast"), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "a\nbb\nlast" {
		t.Errorf("echoed %q", out.String())
	}
}

func TestByteRelayCopiesBothWays(t *testing.T) {
	var out strings.Builder
	in := "{\"id\":1}\n{\"id\":2}\nno newline at the end"
	if err := ByteRelay([]string{"cat"}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("relayed %q, want %q", out.String(), in)
	}
}

func TestByteRelayRefusesNoCommand(t *testing.T) {
	if err := ByteRelay(nil, strings.NewReader(""), &strings.Builder{}); err == nil {
		t.Error("no command accepted")
	}
}
