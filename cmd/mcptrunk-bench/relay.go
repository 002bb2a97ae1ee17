package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// byteRelayCommand is the hidden subcommand launcher.relay runs: the
// thinnest stdio hop there can be, the reference a stdio proxy is measured
// against. It starts its arguments as a child and copies bytes both ways,
// reading nothing of them: no parsing, no routing, no rewriting.
const byteRelayCommand = "byte-relay"

func byteRelay(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("byte-relay: no command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = stdout // the child writes straight to our stdout: one copy less
	if err := cmd.Start(); err != nil {
		return err
	}
	_, copyErr := io.Copy(childIn, stdin) // until the client closes stdin
	return errors.Join(copyErr, childIn.Close(), cmd.Wait())
}

// relay starts the notes server behind a byte relay and connects to it.
func (l *launcher) relay(ctx context.Context) (*endpoint, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, byteRelayCommand, l.notesBin)
	cs, err := connectCmd(ctx, cmd, false)
	if err != nil {
		return nil, fmt.Errorf("connecting to notes through a byte relay: %w", err)
	}
	return &endpoint{
		side: "relay", cs: cs, pid: cmd.Process.Pid, echo: "echo", blob: "blob",
		close: func() error { return closeCmd(cs, cmd, false) },
	}, nil
}
