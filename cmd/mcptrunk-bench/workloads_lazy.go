package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lazyWorkload: servers that cost nothing until used (trunk.lazy), with 20
// real npm servers (7 server-everything, 7 server-memory, 6
// server-filesystem): the time from spawning the trunk to its first
// complete tools/list, and the memory of the whole process tree (trunk and
// servers) once they are idle, eager against lazy with a warm catalog
// cache; and the first call to a sleeping server against that server's own
// start and first call without a trunk.
func (b *bench) lazyWorkload(ctx context.Context) error {
	node, scripts, err := npmScripts(b.cfg.npmModules)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(b.l.dir, "lazy-")
	if err != nil {
		return err
	}
	servers := npmServers(node, scripts, dir, 20)
	write := func(name string, trunk map[string]any) (string, error) {
		data, err := json.MarshalIndent(map[string]any{"mcpServers": servers, "trunk": trunk}, "", "  ")
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, data, 0o644)
	}
	eagerCfg, err := write("eager.json", map[string]any{"startupWait": "120s"})
	if err != nil {
		return err
	}
	lazyCfg, err := write("lazy.json", map[string]any{"startupWait": "120s", "lazy": true})
	if err != nil {
		return err
	}
	cache := filepath.Join(dir, "cache")
	rounds := b.cfg.lazyRounds
	b.progress("lazy: 20 npm servers, eager vs lazy with a warm cache (%d rounds)", rounds)

	// Fill the lazy cache: every server starts once, then sleeps.
	e, err := b.startTree(ctx, lazyCfg, cache)
	if err != nil {
		return err
	}
	if _, err := firstToolsList(ctx, e.cs); err != nil {
		_ = e.Close()
		return err
	}
	if err := waitChildren(e.pid, 0, 120*time.Second); err != nil {
		_ = e.Close()
		return fmt.Errorf("filling the cache: %w", err)
	}
	if err := e.Close(); err != nil {
		return err
	}

	var (
		startup pair[time.Duration]
		memory  pair[int64]
		procs   pair[int64]
	)
	for r := range rounds {
		sides := sidesOf(r) // direct: eager; trunk: lazy
		for _, side := range sides {
			cfg, want := eagerCfg, 20
			if side == "trunk" {
				cfg, want = lazyCfg, 0
			}
			t0 := time.Now()
			e, err := b.startTree(ctx, cfg, cache)
			if err != nil {
				return err
			}
			n, err := firstToolsList(ctx, e.cs)
			elapsed := time.Since(t0)
			if err == nil && n != 20 {
				err = fmt.Errorf("the first tools/list had tools of %d servers, want 20", n)
			}
			if err == nil {
				// Idle: every eager server up and past its start, no lazy one.
				err = waitChildren(e.pid, want, 120*time.Second)
			}
			var kb, count int64
			if err == nil {
				time.Sleep(2 * time.Second)
				kb, count, err = treeRSS(e.pid)
			}
			cerr := e.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", map[string]string{"direct": "eager", "trunk": "lazy"}[side], err)
			}
			if cerr != nil {
				return cerr
			}
			startup.add(side, elapsed)
			memory.add(side, kb)
			procs.add(side, count)
		}
	}
	et, lt := median(startup.direct), median(startup.trunk)
	b.add(row{workload: "lazy: start to the first complete tools/list, 20 npm servers; eager (direct column) vs lazy, warm cache (trunk column)",
		direct: fmtDur(et), trunk: fmtDur(lt), ratio: ratio(lt, et),
		target: "lazy <= 50 ms and >= 10x faster", met: yesNo(lt <= 50*time.Millisecond && 10*lt <= et)})
	em, lm := median(memory.direct), median(memory.trunk)
	b.add(row{workload: "lazy: memory of the process tree, trunk + 20 idle npm servers; eager vs lazy",
		direct: fmtKB(em), trunk: fmtKB(lm), ratio: ratio(float64(lm), float64(em)),
		target: "lazy <= 30 MB", met: yesNo(lm <= 30<<10),
		note: fmt.Sprintf("the sum of VmRSS over the trunk and its descendants (%d and %d processes), 2 s after the first tools/list; shared pages count once per process", median(procs.direct), median(procs.trunk))})

	// The first call to a sleeping server against the server's own start.
	var own, first []time.Duration
	for range rounds {
		t0 := time.Now()
		cs, err := connectCmd(ctx, exec.Command(node, scripts[0], "stdio"), false)
		if err == nil {
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
			own = append(own, time.Since(t0))
			err = errors.Join(err, ignoreExit(cs.Close()))
		}
		if err != nil {
			return fmt.Errorf("server-everything directly: %w", err)
		}
		e, err := b.startTree(ctx, lazyCfg, cache)
		if err != nil {
			return err
		}
		if _, err := firstToolsList(ctx, e.cs); err != nil {
			_ = e.Close()
			return err
		}
		t0 = time.Now()
		res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__s01__echo", Arguments: map[string]any{"message": "hi"}})
		d := time.Since(t0)
		if err == nil && res.IsError {
			err = errors.New("mcp__s01__echo returned an error")
		}
		cerr := e.Close()
		if err != nil {
			return fmt.Errorf("first call through the lazy trunk: %w", err)
		}
		if cerr != nil {
			return cerr
		}
		first = append(first, d)
	}
	ot, ft := median(own), median(first)
	b.add(row{workload: "lazy: first call to a sleeping server-everything; its own start + first call without a trunk (direct column) vs through the trunk (trunk column)",
		direct: fmtDur(ot), trunk: fmtDur(ft), ratio: ratio(ft, ot),
		target: "<= its own start + 50 ms", met: yesNo(ft <= ot+50*time.Millisecond)})
	return nil
}

// startTree serves cfg with its catalog cache under cache.
func (b *bench) startTree(ctx context.Context, cfg, cache string) (*endpoint, error) {
	cmd := exec.Command(b.l.trunkBin, "serve", "--config", cfg, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	cs, err := connectCmd(ctx, cmd, false)
	if err != nil {
		return nil, fmt.Errorf("connecting to mcptrunk: %w", err)
	}
	return &endpoint{side: "trunk", cs: cs, pid: cmd.Process.Pid, close: func() error { return closeCmd(cs, cmd, false) }}, nil
}

// firstToolsList reads every page of the tools list and counts the
// servers it names.
func firstToolsList(ctx context.Context, cs *mcp.ClientSession) (int, error) {
	servers := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return 0, fmt.Errorf("tools/list: %w", err)
		}
		if s, _, ok := strings.Cut(strings.TrimPrefix(tool.Name, "mcp__"), "__"); ok && s != "trunk" {
			servers[s] = true
		}
	}
	return len(servers), nil
}

// children lists the pids whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, de := range entries {
		p, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; cut after ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// waitChildren waits until pid has exactly n child processes.
func waitChildren(pid, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		got := len(children(pid))
		if got == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mcptrunk has %d server processes after %s, want %d", got, within, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// treeRSS sums VmRSS (kB) over pid and all its descendants.
func treeRSS(pid int) (kb, count int64, err error) {
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[0]
		todo = append(todo[1:], children(p)...)
		m, err := procStatus(p, "VmRSS")
		if err != nil {
			if p == pid {
				return 0, 0, err
			}
			continue // exited meanwhile
		}
		kb += m["VmRSS"]
		count++
	}
	return kb, count, nil
}
