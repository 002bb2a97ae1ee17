package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The shared workload's shape: hosts, each wanting the same servers.
const (
	sharedHosts   = 5
	sharedServers = 10
)

// sharedWorkload: what one shared trunk saves when several hosts on a
// machine want the same servers. sharedHosts hosts x sharedServers real npm
// servers (server-everything, server-memory and server-filesystem in
// turn): every host with a stdio trunk and servers of its own (direct
// column: 5 trunks, 50 servers), against one `mcptrunk serve --http` trunk
// with the servers once and every host a session of it (trunk column: 1
// trunk, 10 servers, 5 sessions at 2025-11-25). The processes counted and
// the sum of their VmRSS, 2 s after every host's first complete tools/list.
func (b *bench) sharedWorkload(ctx context.Context) error {
	node, scripts, err := npmScripts(b.cfg.npmModules)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(b.l.dir, "shared-")
	if err != nil {
		return err
	}
	// Every host's trunk has servers of its own, so its memory servers
	// keep files of their own too.
	var perHost []string
	for h := range sharedHosts {
		p, err := writeNPMConfig(dir, fmt.Sprintf("host-%d", h+1), npmServers(node, scripts, filepath.Join(dir, fmt.Sprintf("host-%d", h+1)), sharedServers))
		if err != nil {
			return err
		}
		perHost = append(perHost, p)
	}
	shared, err := writeNPMConfig(dir, "shared", npmServers(node, scripts, filepath.Join(dir, "shared"), sharedServers))
	if err != nil {
		return err
	}
	cache := filepath.Join(dir, "cache")
	rounds := b.cfg.sharedRounds
	b.progress("shared: %d hosts x %d npm servers, a stdio trunk per host vs one serve --http trunk (%d rounds)", sharedHosts, sharedServers, rounds)

	var memory, procs, trunks pair[int64]
	for r := range rounds {
		sides := sidesOf(r) // direct: per host; trunk: shared
		for _, side := range sides {
			var m treeMemory
			var err error
			if side == "direct" {
				m, err = b.perHostTrees(ctx, perHost, cache)
			} else {
				m, err = b.sharedTree(ctx, shared, cache)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", sideName[side], err)
			}
			b.progress("shared: %s: %d processes, %s (trunks %s)", sideName[side], m.procs, fmtKB(m.kb), fmtKB(m.trunkKB))
			memory.add(side, m.kb)
			procs.add(side, m.procs)
			trunks.add(side, m.trunkKB)
		}
	}
	pp, sp := median(procs.direct), median(procs.trunk)
	b.add(row{workload: fmt.Sprintf("shared: processes for %d hosts x %d npm servers; a stdio trunk per host (direct column) vs one serve --http trunk, %d sessions (trunk column)", sharedHosts, sharedServers, sharedHosts),
		direct: fmt.Sprint(pp), trunk: fmt.Sprint(sp), ratio: ratio(float64(sp), float64(pp))})
	pm, sm := median(memory.direct), median(memory.trunk)
	b.add(row{workload: "shared: memory of those processes (trunks and servers)",
		direct: fmtKB(pm), trunk: fmtKB(sm), ratio: ratio(float64(sm), float64(pm)),
		note: fmt.Sprintf("the sum of VmRSS over every trunk and its descendants, 2 s after each host's first complete tools/list; shared pages count once per process; the median of %d round(s)", rounds)})
	pt, st := median(trunks.direct), median(trunks.trunk)
	b.add(row{workload: "shared: memory of the trunk processes alone",
		direct: fmtKB(pt), trunk: fmtKB(st), ratio: ratio(float64(st), float64(pt))})
	return nil
}

// sideName says which setup a column of the shared workload measures.
var sideName = map[string]string{"direct": "a trunk per host", "trunk": "one shared trunk"}

// treeMemory is what one side of the shared workload measured.
type treeMemory struct {
	kb, procs int64 // every process: trunks and servers
	trunkKB   int64 // the trunks alone
}

// perHostTrees starts a stdio trunk for each config, reads each one's tools
// list, and measures them all once every server is up.
func (b *bench) perHostTrees(ctx context.Context, cfgs []string, cache string) (treeMemory, error) {
	var open []*endpoint
	defer func() {
		for _, e := range open {
			_ = e.Close()
		}
	}()
	var pids []int
	for _, cfg := range cfgs {
		e, err := b.startTree(ctx, cfg, cache)
		if err != nil {
			return treeMemory{}, err
		}
		open = append(open, e)
		if err := wantServers(ctx, e.cs, sharedServers); err != nil {
			return treeMemory{}, err
		}
		pids = append(pids, e.pid)
	}
	m, err := measureTrees(pids, sharedServers)
	if err != nil {
		return m, err
	}
	var errs []error
	for _, e := range open {
		errs = append(errs, e.Close())
	}
	open = nil
	return m, errors.Join(errs...)
}

// sharedTree starts one `serve --http` trunk for cfg, connects sharedHosts
// go-sdk sessions to it over streamable HTTP, reads each one's tools list,
// and measures the trunk and its servers.
func (b *bench) sharedTree(ctx context.Context, cfg, cache string) (treeMemory, error) {
	h, err := startHTTPTrunk(ctx, b.l.trunkBin, cfg, cache)
	if err != nil {
		return treeMemory{}, err
	}
	var sessions []*mcp.ClientSession
	stop := func() error {
		var errs []error
		for _, cs := range sessions {
			errs = append(errs, cs.Close())
		}
		sessions = nil
		return errors.Join(append(errs, h.stop())...)
	}
	defer stop()
	for range sharedHosts {
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return treeMemory{}, fmt.Errorf("connecting to %s: %w%s", h.url, err, h.stderrTail())
		}
		sessions = append(sessions, cs)
		if err := wantServers(ctx, cs, sharedServers); err != nil {
			return treeMemory{}, err
		}
	}
	m, err := measureTrees([]int{h.cmd.Process.Pid}, sharedServers)
	if err != nil {
		return m, err
	}
	return m, stop()
}

// wantServers reads every page of the tools list and checks that it names
// n servers.
func wantServers(ctx context.Context, cs *mcp.ClientSession, n int) error {
	got, err := firstToolsList(ctx, cs)
	if err == nil && got != n {
		err = fmt.Errorf("the first tools/list had tools of %d servers, want %d", got, n)
	}
	return err
}

// measureTrees waits until each trunk has servers children, lets them go
// idle for 2 s, and sums VmRSS over the trunks and their descendants.
func measureTrees(pids []int, servers int) (treeMemory, error) {
	for _, pid := range pids {
		if err := waitChildren(pid, servers, 120*time.Second); err != nil {
			return treeMemory{}, err
		}
	}
	time.Sleep(2 * time.Second)
	var m treeMemory
	for _, pid := range pids {
		kb, count, err := treeRSS(pid)
		if err != nil {
			return treeMemory{}, err
		}
		own, err := procStatus(pid, "VmRSS")
		if err != nil {
			return treeMemory{}, err
		}
		m.kb += kb
		m.procs += count
		m.trunkKB += own["VmRSS"]
	}
	return m, nil
}

// httpTrunk is `mcptrunk serve --http 127.0.0.1:0`, with the URL it logged.
type httpTrunk struct {
	cmd    *exec.Cmd
	url    string
	stderr *tailBuffer
	done   chan error // the process's exit
}

// servingURL finds the URL in the record `serve --http` logs once it
// listens.
var servingURL = regexp.MustCompile(`serving MCP over HTTP.*\burl="?(http://[^\s"]+)`)

// startHTTPTrunk starts the trunk on a port the OS picks and waits for the
// record that names its URL.
func startHTTPTrunk(ctx context.Context, trunkBin, cfg, cache string) (*httpTrunk, error) {
	cmd := exec.Command(trunkBin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &httpTrunk{cmd: cmd, stderr: &tailBuffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			h.stderr.add(line)
			if m := servingURL.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		h.done <- cmd.Wait()
	}()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case h.url = <-found:
		return h, nil
	case err := <-h.done:
		h.done <- err
		return nil, fmt.Errorf("mcptrunk serve --http exited before serving (%v)%s", err, h.stderrTail())
	case <-wait.Done():
		_ = h.stop()
		return nil, fmt.Errorf("mcptrunk serve --http logged no URL within 30 s%s", h.stderrTail())
	}
}

// stop ends the trunk with SIGTERM (SIGKILL after 10 s) and waits for it.
func (h *httpTrunk) stop() error {
	if h.cmd == nil {
		return nil
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-h.done:
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
		err = errors.New("mcptrunk serve --http did not exit within 10 s of SIGTERM")
	}
	h.cmd = nil
	return ignoreExit(err)
}

func (h *httpTrunk) stderrTail() string {
	if s := h.stderr.String(); s != "" {
		return "\nstderr:\n" + s
	}
	return ""
}

// tailBuffer keeps the last lines a process wrote, for an error message.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 20 {
		t.lines = t.lines[len(t.lines)-20:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// ---- the npm servers ----

// npmScripts finds node and the scripts of the three npm servers the
// workloads run: server-everything, server-memory, server-filesystem.
func npmScripts(modules string) (node string, scripts [3]string, err error) {
	if node, err = exec.LookPath("node"); err != nil {
		return "", scripts, fmt.Errorf("node runs the npm servers: %w", err)
	}
	for i, pkg := range []string{"server-everything", "server-memory", "server-filesystem"} {
		if scripts[i], err = testkit.NPMBin(modules, "@modelcontextprotocol/"+pkg); err != nil {
			return "", scripts, fmt.Errorf("%w (run `make npm` first)", err)
		}
	}
	return node, scripts, nil
}

// npmServers is n servers s01, s02, ..., the three kinds in turn
// (server-everything first), their files under dir: each memory server's
// own file, and dir as the filesystem servers' root.
func npmServers(node string, scripts [3]string, dir string, n int) map[string]any {
	servers := map[string]any{}
	for i := range n {
		var s map[string]any
		switch i % 3 {
		case 0:
			s = map[string]any{"command": node, "args": []string{scripts[0], "stdio"}}
		case 1:
			s = map[string]any{"command": node, "args": []string{scripts[1]},
				"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, fmt.Sprintf("memory-%02d.jsonl", i+1))}}
		default:
			s = map[string]any{"command": node, "args": []string{scripts[2], dir}}
		}
		s["timeouts"] = map[string]string{"connect": "120s", "list": "120s"}
		servers[fmt.Sprintf("s%02d", i+1)] = s
	}
	return servers
}

// writeNPMConfig writes dir/name.json serving servers, the first list
// waiting up to 120 s for them, and creates dir/name for their files.
func writeNPMConfig(dir, name string, servers map[string]any) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(map[string]any{"mcpServers": servers, "trunk": map[string]any{"startupWait": "120s"}}, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".json")
	return p, os.WriteFile(p, data, 0o644)
}
