package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/mcptrunk/mcptrunk/cmd/mcptrunk-bench/refhop"
)

// refHops are the hidden subcommands that run a reference hop (package
// refhop), each in a process of its own.
var refHops = map[string]func(args []string) error{
	refhop.PipeEchoCommand:     func([]string) error { return refhop.PipeEcho(os.Stdin, os.Stdout) },
	refhop.ByteRelayCommand:    func(args []string) error { return refhop.ByteRelay(args, os.Stdin, os.Stdout) },
	refhop.ReverseProxyCommand: func(args []string) error { return refhop.ReverseProxy(args, os.Stdout) },
}

// relay starts the notes server behind a byte relay and connects to it.
func (l *launcher) relay(ctx context.Context) (*endpoint, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, refhop.ByteRelayCommand, l.notesBin)
	cs, err := connectCmd(ctx, cmd, false)
	if err != nil {
		return nil, fmt.Errorf("connecting to notes through a byte relay: %w", err)
	}
	return &endpoint{
		side: "relay", cs: cs, pid: cmd.Process.Pid, echo: "echo", blob: "blob",
		close: func() error { return closeCmd(cs, cmd, false) },
	}, nil
}
