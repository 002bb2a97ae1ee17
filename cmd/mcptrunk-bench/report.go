package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// row is one line of the result table. Empty cells print as "-".
type row struct {
	workload      string
	direct, trunk string
	ratio         string
	target, met   string
	note          string
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// ratio is trunk over direct, for times and rates alike.
func ratio[T int64 | float64 | time.Duration](trunk, direct T) string {
	if direct == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(trunk)/float64(direct))
}

func cell(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printTable writes the rows as a Markdown table, then the notes, then the
// machine they were measured on.
func printTable(w io.Writer, rows []row, machine, load string, took time.Duration, args string) {
	if len(rows) > 0 { // -only peers has a table of its own
		fmt.Fprintln(w, "| workload | direct | trunk | ratio | target | met? |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---|---|")
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.workload, cell(r.direct), cell(r.trunk), cell(r.ratio), cell(r.target), cell(r.met))
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		if r.note != "" {
			fmt.Fprintf(w, "- %s: %s\n", r.workload, r.note)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Machine: %s. Load average %s. Run: `mcptrunk-bench %s` in %s.\n", machine, load, args, took.Round(time.Second))
}

// loadAverage is the 1-minute load average (other work on the machine
// inflates latencies; it is printed with the results).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// machine describes where the numbers come from.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	kernel := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d CPUs (%s), %s %s/%s%s", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel)
}
