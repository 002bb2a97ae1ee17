package refhop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// StartReverseProxy runs the benchmark binary (this one) as reverse-proxy in
// front of target and returns the URL it serves, its process id (whose CPU
// time the http workload reads) and how to stop it.
func StartReverseProxy(ctx context.Context, target string) (url string, pid int, stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	cmd := exec.CommandContext(ctx, self, ReverseProxyCommand, target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	var line [256]byte
	n, err := out.Read(line[:])
	if err != nil || n == 0 {
		stop()
		return "", 0, nil, fmt.Errorf("reverse-proxy printed no URL: %v", err)
	}
	return string(line[:n-1]), cmd.Process.Pid, stop, nil
}
