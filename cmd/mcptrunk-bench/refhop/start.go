package refhop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// StartReverseProxy runs the benchmark binary (this one) as reverse-proxy in
// front of target and returns the URL it serves and how to stop it.
func StartReverseProxy(ctx context.Context, target string) (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, self, ReverseProxyCommand, target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	var line [256]byte
	n, err := out.Read(line[:])
	if err != nil || n == 0 {
		stop()
		return "", nil, fmt.Errorf("reverse-proxy printed no URL: %v", err)
	}
	return string(line[:n-1]), stop, nil
}
