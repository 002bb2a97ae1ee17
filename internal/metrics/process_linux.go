//go:build linux

package metrics

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// The process's own metrics, under the names Prometheus' Go client gives
// them, read from /proc at each scrape. A file that cannot be read leaves
// its families out.

// userHZ is the kernel's clock tick for /proc's times (USER_HZ), 100 on
// every Linux platform the trunk runs on.
const userHZ = 100

func processFamilies() []family {
	var fams []family
	add := func(name, typ, help string, v float64) { fams = append(fams, gaugeFamily(name, typ, help, v)) }
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command, which is in parentheses and may
		// hold anything.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			f := strings.Fields(string(stat[i+1:]))
			// f[0] is field 3 (state): field n is f[n-3].
			if len(f) > 21 {
				utime, _ := strconv.ParseFloat(f[14-3], 64)
				stime, _ := strconv.ParseFloat(f[15-3], 64)
				start, _ := strconv.ParseFloat(f[22-3], 64)
				vsize, _ := strconv.ParseFloat(f[23-3], 64)
				rss, _ := strconv.ParseFloat(f[24-3], 64)
				add("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", (utime+stime)/userHZ)
				add("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", vsize)
				add("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", rss*float64(os.Getpagesize()))
				if boot, ok := bootTime(); ok {
					add("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", boot+start/userHZ)
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		add("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(fds)))
	}
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := softLimit(limits, "Max open files"); ok {
			add("process_max_fds", "gauge", "Maximum number of open file descriptors.", v)
		}
		if v, ok := softLimit(limits, "Max address space"); ok {
			add("process_virtual_memory_max_bytes", "gauge", "Maximum amount of virtual memory available in bytes.", v)
		}
	}
	if in, out, ok := netBytes(); ok {
		add("process_network_receive_bytes_total", "counter", "Number of bytes received by the process over the network.", in)
		add("process_network_transmit_bytes_total", "counter", "Number of bytes sent by the process over the network.", out)
	}
	return fams
}

// bootTime is when the system booted (btime in /proc/stat), in seconds
// since the Unix epoch.
func bootTime() (float64, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			t, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t, err == nil
		}
	}
	return 0, false
}

// softLimit is the soft limit of the /proc/self/limits line that starts
// with name; "unlimited" is the largest uint64, as the Go client reports
// it.
func softLimit(limits []byte, name string) (float64, bool) {
	for line := range strings.SplitSeq(string(limits), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		if f[0] == "unlimited" {
			return float64(^uint64(0)), true
		}
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	}
	return 0, false
}

// netBytes are the bytes received and sent over IP in the process's
// network namespace (IpExt InOctets and OutOctets in
// /proc/self/net/netstat).
func netBytes() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "IpExt:") || !strings.HasPrefix(lines[i+1], "IpExt:") {
			continue
		}
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		var foundIn, foundOut bool
		for j := 1; j < len(names) && j < len(values); j++ {
			switch names[j] {
			case "InOctets":
				in, err = strconv.ParseFloat(values[j], 64)
				foundIn = err == nil
			case "OutOctets":
				out, err = strconv.ParseFloat(values[j], 64)
				foundOut = err == nil
			}
		}
		return in, out, foundIn && foundOut
	}
	return 0, 0, false
}
