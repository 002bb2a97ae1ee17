package main

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestPercentileAndMedian(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i))
	}
	if p := percentile(s, 50); p != 50 {
		t.Errorf("p50 = %d, want 50", p)
	}
	if p := percentile(s, 99); p != 99 {
		t.Errorf("p99 = %d, want 99", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("p50 of nothing = %d", p)
	}
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v, want 2", m)
	}
	if m := median([]int{4, 1, 3, 2}); m != 2 {
		t.Errorf("median = %v, want 2 (integer mean of 2 and 3)", m)
	}
}

func TestFormatting(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fmtDur(250 * time.Microsecond), "250 µs"},
		{fmtDur(2500 * time.Microsecond), "2.50 ms"},
		{fmtDur(25 * time.Millisecond), "25.0 ms"},
		{fmtDur(2500 * time.Millisecond), "2.50 s"},
		{fmtDelta(-3 * time.Millisecond), "-3.00 ms"},
		{fmtDelta(90 * time.Microsecond), "+90 µs"},
		{thousands(100000), "100,000"},
		{thousands(999), "999"},
		{fmtKB(30 << 10), "30.0 MB"},
		{ratio(3*time.Millisecond, 2*time.Millisecond), "1.50x"},
		{ratio(1.0, 0.0), "-"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestCountOver(t *testing.T) {
	s := []time.Duration{time.Millisecond, 20 * time.Millisecond, 21 * time.Millisecond, time.Second}
	if n := countOver(s, 20*time.Millisecond); n != 2 {
		t.Errorf("countOver = %d, want 2 (strictly over)", n)
	}
}

func TestProcReaders(t *testing.T) {
	st, err := procStatus(os.Getpid(), "VmRSS", "VmHWM", "Threads")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if st["VmRSS"] <= 0 || st["VmHWM"] < st["VmRSS"] || st["Threads"] < 1 {
		t.Errorf("implausible status: %v", st)
	}
	if _, err := procStatus(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("a missing field is not an error")
	}
	if _, err := procCPU(os.Getpid()); err != nil {
		t.Error(err)
	}
}

func TestFlags(t *testing.T) {
	var stderr strings.Builder
	c, err := parseFlags([]string{"-quick", "-rounds", "7", "-only", "calls, growth"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if c.rounds != 7 || c.calls != 500 || c.growthCalls != 20000 {
		t.Errorf("-quick with -rounds 7: rounds %d calls %d growth-calls %d", c.rounds, c.calls, c.growthCalls)
	}
	if c.holRounds != 1 || c.holTime != time.Second {
		t.Errorf("-quick: hol-rounds %d hol-time %s", c.holRounds, c.holTime)
	}
	if !c.only["calls"] || !c.only["growth"] || len(c.only) != 2 {
		t.Errorf("-only: %v", c.only)
	}
	for _, args := range [][]string{{"-only", "nope"}, {"-calls", "0"}, {"-growth-calls", "10"}, {"-hol-time", "0s"}, {"-hol-rounds", "0"}, {"extra"}} {
		if _, err := parseFlags(args, &stderr); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestParseInitTrace(t *testing.T) {
	trace := "init runtime @0.024 ms, 0.088 ms clock, 0 bytes, 0 allocs\n" +
		"some other line on stderr\n" +
		"init github.com/prometheus/client_golang/prometheus @8.0 ms, 0.20 ms clock, 64544 bytes, 249 allocs\n"
	got, err := parseInitTrace(trace)
	if err != nil {
		t.Fatal(err)
	}
	want := []initCost{{"runtime", 88 * time.Microsecond}, {"github.com/prometheus/client_golang/prometheus", 200 * time.Microsecond}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].pkg != want[i].pkg || (got[i].clock-want[i].clock).Abs() > time.Microsecond {
			t.Errorf("line %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := parseInitTrace("no trace at all\n"); err == nil {
		t.Error("a stderr without init lines parsed without an error")
	}
}

// A reading of the binary names its build: cgo, stripped, -trimpath.
func TestDescribeBuild(t *testing.T) {
	release := []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"}}
	if got := describeBuild(release, false, false); got != "cgo off, stripped (-s -w), -trimpath" {
		t.Errorf("release build: %q", got)
	}
	if got := describeBuild([]debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}}, true, false); got != "cgo on, symbols kept, no DWARF (-w)" {
		t.Errorf("a go build with -w only: %q", got)
	}
}
