package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBinaryMappings: only the executable's mappings that are not writable
// and hold no written (anonymous) page, in memory or swapped out, are
// released; a path with spaces, another file's mapping, the heap and a
// read-only mapping with a written page (a PIE binary's relocated data,
// say) are not.
func TestBinaryMappings(t *testing.T) {
	const exe = "/opt/mc trunk/mcptrunk"
	smaps := `00400000-00c00000 r-xp 00000000 fd:01 123 /opt/mc trunk/mcptrunk
Size:               8192 kB
Anonymous:             0 kB
00c00000-01400000 r--p 00800000 fd:01 123 /opt/mc trunk/mcptrunk
Size:               8192 kB
Anonymous:             0 kB
01400000-01500000 rw-p 01000000 fd:01 123 /opt/mc trunk/mcptrunk
Anonymous:            64 kB
01500000-01600000 r--p 01100000 fd:01 123 /opt/mc trunk/mcptrunk
Anonymous:             4 kB
01580000-01590000 r--p 01180000 fd:01 123 /opt/mc trunk/mcptrunk
Anonymous:             0 kB
Swap:                 64 kB
01600000-01700000 rw-p 00000000 00:00 0
Anonymous:           512 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:01 456 /usr/lib/other.so
Anonymous:             0 kB
`
	got := binaryMappings([]byte(smaps), exe)
	want := []mapping{{0x400000, 0xc00000}, {0xc00000, 0x1400000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("binaryMappings = %#x, want %#x", got, want)
	}
}

// TestPositionDependent: the test binary, built as `go test` builds it
// here, is position-dependent or not as its ELF header says; a file that is
// no ELF is neither.
func TestPositionDependent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	want := f.Type == elf.ET_EXEC
	f.Close()
	if got := positionDependent(exe); got != want {
		t.Errorf("positionDependent(test binary) = %v, its ELF type is %v", got, f.Type)
	}
	notELF := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\necho hello, world\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if positionDependent(notELF) {
		t.Error("a shell script read as an ELF executable")
	}
}
