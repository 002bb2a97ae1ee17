package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseBinaryPages takes the executable's read-only pages out of the
// process (MADV_DONTNEED) and has the kernel map from then on only the
// pages the trunk touches (MADV_RANDOM: no fault-around, which maps 64 KiB
// around each fault). The pages stay in the page cache, shared with every
// other process that maps the binary; what leaves is their place in this
// process's RSS, where start-up's code (flags, config, the first catalog)
// and fault-around's neighbours would otherwise stay for the trunk's whole
// life. A page used again costs a minor fault. Only a position-dependent
// executable's (ET_EXEC, as `go build` makes by default) read-only
// mappings holding no private page, resident or swapped, are touched: a
// position-independent one has read-only pages the loader wrote
// (relocations), and dropping a written page would lose what was written.
func releaseBinaryPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil || !positionDependent("/proc/self/exe") {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range binaryMappings(smaps, exe) {
		for _, advice := range []uintptr{syscall.MADV_RANDOM, syscall.MADV_DONTNEED} {
			if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, advice); errno != 0 {
				return
			}
		}
	}
}

// positionDependent reports whether path is an ELF executable of type
// ET_EXEC, whose pages the loader does not relocate.
func positionDependent(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [18]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	const etExec = 2
	little := head[5] == 1 // EI_DATA: ELFDATA2LSB
	typ := uint16(head[16]) | uint16(head[17])<<8
	if !little {
		typ = uint16(head[16])<<8 | uint16(head[17])
	}
	return string(head[:4]) == "\x7fELF" && typ == etExec
}

// mapping is an address range of /proc/self/smaps.
type mapping struct{ start, end uintptr }

// binaryMappings reads smaps (the text of /proc/self/smaps) for the
// mappings of the file exe that are not writable and hold no anonymous
// (copied on write) page, in memory or in swap.
func binaryMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header: range perms offset dev inode [path]
			cur = nil
			if len(fields) < 6 || strings.Join(fields[5:], " ") != exe || strings.Contains(fields[1], "w") {
				continue
			}
			lo, hi, _ := strings.Cut(fields[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil || end <= start {
				continue
			}
			out = append(out, mapping{uintptr(start), uintptr(end)})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil && (fields[0] == "Anonymous:" || fields[0] == "Swap:") && (len(fields) < 2 || fields[1] != "0") {
			out = out[:len(out)-1] // it holds written pages: left alone
			cur = nil
		}
	}
	return out
}
