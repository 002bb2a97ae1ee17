package stdio

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// awaitExit waits for a process in the runtime's poller, holding no OS
// thread while the process runs (a wait system call would hold one per
// idle server), and returns once the process has exited.
func TestAwaitExitWaitsInThePoller(t *testing.T) {
	const n = 5
	var cmds []*exec.Cmd
	done := make(chan int, n)
	for i := range n {
		cmd := exec.Command("cat")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() { _ = stdin.Close() })
		go func() {
			awaitExit(cmd.Process.Pid)
			done <- i
		}()
	}

	// Every waiting goroutine parks in the poller.
	deadline := time.Now().Add(10 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
		polling, blocked := 0, 0
		for _, s := range stacks {
			if !strings.Contains(s, "stdio.awaitExit") {
				continue
			}
			if strings.Contains(s, "runtime_pollWait") {
				polling++
			} else if strings.Contains(s, "syscall") {
				blocked++
			}
		}
		if polling == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d goroutines in awaitExit wait in the poller, %d in a system call", polling, n, blocked)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case i := <-done:
		t.Fatalf("awaitExit returned for process %d, which still runs", i)
	default:
	}

	for i, cmd := range cmds {
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if got := <-done; got != i {
			t.Fatalf("awaitExit returned for process %d, want %d (the one killed)", got, i)
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("process %d: Wait after awaitExit: %v, want killed", i, err)
		}
	}
}
