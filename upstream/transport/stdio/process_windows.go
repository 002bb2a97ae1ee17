//go:build windows

package stdio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// setProcessGroup starts the server in a new process group so console
// Ctrl-C events aimed at the host do not reach it directly.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Windows has no SIGTERM for console programs; closing stdin is the polite
// request, and after that the process is killed.
func terminateGroup(p *os.Process) error { return killGroup(p) }

func killGroup(p *os.Process) error {
	err := p.Kill()
	if err == os.ErrProcessDone {
		return nil
	}
	return err
}

// resolveCommand runs batch-file shims such as npx.cmd through cmd.exe:
// CreateProcess cannot start a .cmd or .bat file by itself, and most Node
// tools are installed as such shims.
func resolveCommand(name string, args []string) (string, []string) {
	path, err := exec.LookPath(name)
	if err != nil {
		return name, args
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".cmd", ".bat":
		return "cmd.exe", append([]string{"/d", "/s", "/c", path}, args...)
	}
	return path, args
}

// envKey folds case: Windows environment names are case-insensitive.
func envKey(k string) string { return strings.ToUpper(k) }
