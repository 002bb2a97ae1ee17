package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0..100) of sorted samples,
// nearest-rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// median of a few values (a copy is sorted).
func median[T int | int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// procStatus reads fields of /proc/<pid>/status ("VmRSS", "VmHWM" in kB,
// "Threads"); pid 0 is this process.
func procStatus(pid int, fields ...string) (map[string]int64, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || !slices.Contains(fields, key) {
			continue
		}
		n, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, key, err)
		}
		out[key] = n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range fields {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("%s has no %s", path, k)
		}
	}
	return out, nil
}

// resetPeak resets VmHWM to the current RSS (Linux: clear_refs 5), so a
// peak can be attributed to one workload. Failing that, the peak since the
// process started is reported, which is only ever larger.
func resetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// ---- formatting ----

func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtDur(-d)
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// fmtDurs lists durations: "[150 µs 162 µs]".
func fmtDurs(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmtDur(d)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// fmtDelta is a signed difference, "+12 µs" or "-3.1 ms".
func fmtDelta(d time.Duration) string {
	if d < 0 {
		return fmtDur(d)
	}
	return "+" + fmtDur(d)
}

func fmtRate(perSec float64) string { return fmt.Sprintf("%.0f calls/s", perSec) }

// fmtMB formats a size in bytes in millions of bytes, as ls -l and
// release pages count a binary's size.
func fmtMB(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func fmtKB(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// procCPU is the CPU time (user + system) process pid has used so far,
// from /proc/<pid>/stat, in clock ticks of 10 ms (USER_HZ on Linux).
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may hold spaces: count from after it.
	i := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
