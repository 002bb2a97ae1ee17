package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// footprintRuns is how many fresh processes each footprint reading takes
// the best and the median of.
const footprintRuns = 15

// footprintWorkload measures what every start of the trunk costs, whatever
// it is then asked to do: the binary's size, the wall time of `mcptrunk
// version` and the part of it spent initialising packages
// (GODEBUG=inittrace=1), the time from spawning `mcptrunk serve` with no
// servers to its answer to initialize, and the RSS of that trunk once it
// idles. The RSS of a trunk with 20 idle servers is the catalog workload's.
func (b *bench) footprintWorkload(ctx context.Context) error {
	b.progress("footprint: binary, version, init, first initialize, idle RSS (%d runs each)", footprintRuns)
	fi, err := os.Stat(b.l.trunkBin)
	if err != nil {
		return err
	}
	b.add(row{workload: "mcptrunk binary size", trunk: fmtMB(fi.Size()), target: "<= 25 MB", met: yesNo(fi.Size() <= 25e6),
		note: "built " + buildKind(b.l.trunkBin)})

	var walls, inits []time.Duration
	var heaviest []initCost
	for range footprintRuns {
		start := time.Now()
		if out, err := exec.CommandContext(ctx, b.l.trunkBin, "version").CombinedOutput(); err != nil {
			return fmt.Errorf("mcptrunk version: %w: %s", err, out)
		}
		walls = append(walls, time.Since(start))
		total, costs, err := initTrace(ctx, b.l.trunkBin)
		if err != nil {
			return err
		}
		inits = append(inits, total)
		heaviest = costs
	}
	wallBest, initBest := slices.Min(walls), slices.Min(inits)
	b.add(row{workload: "`mcptrunk version`, wall time (best; median)", trunk: fmtDur(wallBest) + "; " + fmtDur(median(walls)),
		target: "<= 10 ms", met: yesNo(wallBest <= 10*time.Millisecond)})
	var top []string
	for _, c := range heaviest[:min(len(heaviest), 5)] {
		top = append(top, fmt.Sprintf("%s %.2f ms", c.pkg, float64(c.clock)/1e6))
	}
	b.add(row{workload: "package initialisation, sum of GODEBUG=inittrace=1 clocks (best; median)", trunk: fmtDur(initBest) + "; " + fmtDur(median(inits)),
		target: "<= 5 ms", met: yesNo(initBest <= 5*time.Millisecond), note: "heaviest in the last run: " + strings.Join(top, ", ")})

	path, err := b.l.writeConfig(nil, nil)
	if err != nil {
		return err
	}
	var firsts []time.Duration
	for i := range footprintRuns {
		last := i == footprintRuns-1
		first, st, err := b.firstInitialize(ctx, path, last)
		if err != nil {
			return err
		}
		firsts = append(firsts, first)
		if last {
			b.add(row{workload: "no server: spawn to the first initialize answer (best; median)", trunk: fmtDur(slices.Min(firsts)) + "; " + fmtDur(median(firsts)),
				target: "<= 20 ms", met: yesNo(slices.Min(firsts) <= 20*time.Millisecond)})
			b.add(row{workload: fmt.Sprintf("no server, idle trunk RSS %s after initialize", b.cfg.idleWait), trunk: fmtKB(st["VmRSS"]), target: "<= 12 MB", met: yesNo(st["VmRSS"] <= 12<<10),
				note: fmt.Sprintf("anonymous (heap, stacks) %s, file-backed (the binary's pages) %s", fmtKB(st["RssAnon"]), fmtKB(st["RssFile"]))})
		}
	}
	return nil
}

// firstInitialize starts `mcptrunk serve --config path` and times the way
// from spawning it to reading its answer to initialize over stdio. With
// idle, it then lets the trunk idle for -idle-wait (past its release of
// the startup's memory, releaseAfterStartup) and reads its /proc status.
func (b *bench) firstInitialize(ctx context.Context, path string, idle bool) (time.Duration, map[string]int64, error) {
	cmd := exec.CommandContext(ctx, b.l.trunkBin, "serve", "--config", path, "--log-level", "warn")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stop := func() error {
		_ = stdin.Close()
		return ignoreExit(cmd.Wait())
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptrunk-bench","version":"1"}}}` + "\n"
	if _, err := io.WriteString(stdin, initialize); err != nil {
		return 0, nil, errors.Join(err, stop())
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	took := time.Since(start)
	if err != nil {
		return 0, nil, errors.Join(fmt.Errorf("no answer to initialize: %w; stderr: %s", err, stderr.String()), stop())
	}
	if !bytes.Contains(line, []byte(`"result"`)) {
		return 0, nil, errors.Join(fmt.Errorf("initialize answered %s", truncate(string(line), 200)), stop())
	}
	var st map[string]int64
	if idle {
		if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			return 0, nil, errors.Join(err, stop())
		}
		time.Sleep(b.cfg.idleWait)
		if st, err = procStatus(cmd.Process.Pid, "VmRSS", "RssAnon", "RssFile"); err != nil {
			return 0, nil, errors.Join(err, stop())
		}
	}
	return took, st, stop()
}

// initCost is one package's line of GODEBUG=inittrace=1.
type initCost struct {
	pkg   string
	clock time.Duration
}

// initTrace runs `bin version` with GODEBUG=inittrace=1 and returns the sum
// of the packages' init clocks and the packages, heaviest first.
func initTrace(ctx context.Context, bin string) (time.Duration, []initCost, error) {
	cmd := exec.CommandContext(ctx, bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, nil, fmt.Errorf("GODEBUG=inittrace=1 mcptrunk version: %w", err)
	}
	costs, err := parseInitTrace(stderr.String())
	if err != nil {
		return 0, nil, err
	}
	var total time.Duration
	for _, c := range costs {
		total += c.clock
	}
	slices.SortFunc(costs, func(a, b initCost) int { return int(b.clock - a.clock) })
	return total, costs, nil
}

// parseInitTrace reads lines of the form
// "init PKG @T ms, C ms clock, B bytes, A allocs".
func parseInitTrace(s string) ([]initCost, error) {
	var out []initCost
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return nil, fmt.Errorf("inittrace line %q: %w", line, err)
		}
		out = append(out, initCost{pkg: f[1], clock: time.Duration(ms * 1e6)})
	}
	if len(out) == 0 {
		return nil, errors.New("GODEBUG=inittrace=1 printed no init lines")
	}
	return out, nil
}

// buildKind says how a Go binary was built, as far as its size and the
// pages it maps depend on it: with or without cgo, with or without its
// symbol table and DWARF (-ldflags=-s -w; read from the ELF file, as
// -trimpath leaves -ldflags out of the build info), -trimpath. The figures
// of two builds differ by a third in size and about a megabyte of RSS, so
// a reading names its build.
func buildKind(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	symbols, dwarf := true, true
	if f, err := elf.Open(path); err == nil {
		symbols = f.Section(".symtab") != nil
		dwarf = f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
		f.Close()
	}
	return describeBuild(info.Settings, symbols, dwarf)
}

func describeBuild(settings []debug.BuildSetting, symbols, dwarf bool) string {
	cgo, trimpath := "cgo on", ""
	for _, s := range settings {
		switch {
		case s.Key == "CGO_ENABLED" && s.Value != "1":
			cgo = "cgo off"
		case s.Key == "-trimpath" && s.Value == "true":
			trimpath = ", -trimpath"
		}
	}
	kept := "stripped (-s -w)"
	switch {
	case symbols && dwarf:
		kept = "symbols and DWARF kept"
	case symbols:
		kept = "symbols kept, no DWARF (-w)"
	case dwarf:
		kept = "DWARF kept, no symbols"
	}
	return cgo + ", " + kept + trimpath
}
