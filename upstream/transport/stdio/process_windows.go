//go:build windows

package stdio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio/internal/winexec"
)

// command builds the server's command. The name is resolved through the
// server's own PATH and PATHEXT (the spec's env merged onto the trunk's), so
// "npx" finds npx.cmd without a `cmd /c` in the config. A batch file is run
// by cmd.exe with a command line built by winexec.QuoteForCmd, because
// os/exec quotes only for CommandLineToArgvW and cmd.exe would read an
// argument's & or | as a command; an argument no quoting makes safe fails
// the start, named by its index. The server starts in a new process group
// so console Ctrl-C events aimed at the host do not reach it directly.
func command(name string, args, env []string, dir string) (*exec.Cmd, error) {
	path, err := winexec.Resolve(name,
		winexec.SplitList(winexec.Getenv(env, "PATH")),
		winexec.SplitPathExt(winexec.Getenv(env, "PATHEXT")),
		func(f string) bool { return isFile(f, dir) })
	if err != nil {
		return nil, err
	}
	sys := &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	var cmd *exec.Cmd
	if winexec.IsBatch(path) {
		line, err := winexec.QuoteForCmd(path, args)
		if err != nil {
			return nil, err
		}
		shell, err := cmdExe()
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(shell)
		sys.CmdLine = line
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Env, cmd.Dir, cmd.SysProcAttr = env, dir, sys
	return cmd, nil
}

// isFile reports whether a regular file is at name, read relative to dir
// (the server's working directory) when it is relative, as CreateProcess
// will read it once os/exec has joined the two.
func isFile(name, dir string) bool {
	if dir != "" && !filepath.IsAbs(name) && filepath.VolumeName(name) == "" &&
		!strings.HasPrefix(name, `\`) && !strings.HasPrefix(name, "/") {
		name = filepath.Join(dir, name)
	}
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// cmdExe is the system's cmd.exe, found from the system directory rather
// than %ComSpec%, which any environment can point elsewhere.
func cmdExe() (string, error) {
	dir, err := windows.GetSystemDirectory()
	if err != nil {
		return "", fmt.Errorf("finding cmd.exe: %w", err)
	}
	return filepath.Join(dir, "cmd.exe"), nil
}

// processGroup is a Job Object holding the server and everything it starts
// (cmd.exe -> node.exe for npx.cmd). The job is made with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and its only handle is the trunk's, so
// when the trunk exits, however it exits, Windows closes the handle and
// kills the whole tree: the counterpart of Pdeathsig on Linux, and one that
// reaches grandchildren too.
type processGroup struct {
	job  windows.Handle // 0 when the server could not be put in it
	proc *os.Process
}

func newProcessGroup() (*processGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return nil, fmt.Errorf("setting up a job object: %w", err)
	}
	return &processGroup{job: job}, nil
}

// add puts the started server in the job. It runs right after the process
// starts, before the transport's goroutines: a process the server starts in
// that moment (microseconds; cmd.exe has not finished loading by then) stays
// outside the job and is not killed with it. Starting the server suspended
// would close that window, but os/exec gives no handle to its first thread
// to resume. os/exec keeps the process's handle open until Wait, so its pid
// cannot name another process here.
//
// On failure (a job of the trunk's own that forbids nesting, say) the
// server runs outside any job, and kill falls back to killing the process
// alone.
func (g *processGroup) add(p *os.Process) error {
	g.proc = p
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(g.job, h)
		_ = windows.CloseHandle(h)
	}
	if err != nil {
		g.close()
		return fmt.Errorf("putting the server in a job object: %w", err)
	}
	return nil
}

// Windows has no SIGTERM for console programs; closing stdin is the polite
// request, and after that the tree is killed.
func (g *processGroup) terminate() error { return g.kill() }

// kill ends every process in the job: the server and whatever it started.
func (g *processGroup) kill() error {
	if g.job != 0 {
		return windows.TerminateJobObject(g.job, 1)
	}
	if g.proc == nil {
		return nil
	}
	err := g.proc.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// close releases the job; KILL_ON_JOB_CLOSE ends anything still in it.
func (g *processGroup) close() {
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
		g.job = 0
	}
}

// envKey folds case: Windows environment names are case-insensitive.
func envKey(k string) string { return strings.ToUpper(k) }

// awaitExit returns at once: cmd.Wait waits for the process.
func awaitExit(int) {}
