package stdio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcptrunk/mcptrunk/upstream/transport/stdio/internal/winexec"
)

// startError is the error of a server's command that did not start. A
// command that is not there is named as missing, with what to do about
// it, rather than as the system call that failed (fork/exec ...: no such
// file or directory): a bare name is looked for in PATH, which is shown;
// a path to no file says so; a file that is there but whose #! line names
// a missing interpreter says that. The cause stays in the chain.
func startError(path string, env []string, err error) error {
	msg := ""
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, winexec.ErrNotFound):
		msg = fmt.Sprintf("command %q not found: it is in no directory of PATH (%s); install it, or give its full path in the config", path, pathOf(env))
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := os.Stat(path); serr != nil {
			msg = fmt.Sprintf("command %q not found: there is no such file", path)
			if !filepath.IsAbs(path) {
				msg += " (a relative command is taken from the config file's directory, or the server's cwd)"
			}
		} else {
			msg = fmt.Sprintf("command %q cannot run: the interpreter its first line (#!) names is not installed", path)
		}
	default:
		return fmt.Errorf("starting %q: %w", path, err)
	}
	return &notFoundError{msg: msg, err: err}
}

// pathOf is the value of PATH in env.
func pathOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && strings.EqualFold(k, "PATH") {
			return "PATH=" + v
		}
	}
	return "PATH is not set"
}

// notFoundError says a command is missing in words a person acts on, and
// unwraps to the error the system gave.
type notFoundError struct {
	msg string
	err error
}

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return e.err }
