//go:build linux

package upstream

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// procfs says whether the process checks below can see processes at all.
const procfs = true

// alive reports whether pid is a running process. A zombie counts as gone:
// it has exited, and whoever reaps it (here often not us: a grandchild is
// reparented to init) decides when it disappears.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	switch stat[i+2] {
	case 'Z', 'X', 'x':
		return false
	}
	return true
}

// tagged lists the live processes whose environment holds MCPTRUNK_TEST_TAG=tag:
// every server a test started and every process those started in turn.
func tagged(tag string) []int {
	want := []byte(envTag + "=" + tag)
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if alive(pid) {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}
