// Command mcptrunk is one MCP server that stands in front of many: it starts
// or connects to every server in its config and re-exports their tools,
// prompts, resources and templates under mcp__<server>__<name> names.
//
// Run with no command it serves MCP on stdin/stdout (mcptrunk serve); the
// other commands (list, call, check, pin, status, auth, import, install,
// uninstall, connect, version, completion) are described by
// `mcptrunk --help` and `mcptrunk COMMAND --help`. The command line is
// defined in cli.go.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcptrunk/mcptrunk/internal/liveline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if msg := fatalMessage(err); msg != "" {
		fmt.Fprintln(os.Stderr, "mcptrunk:", msg)
	}
	os.Exit(exitCode(err))
}

// exitError ends the program with a status and no further message: the
// command has already said what went wrong.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// errUsage is what a usage error (an unknown command or flag, missing or
// extra arguments) is: run has printed the message and where to find help.
var errUsage = errors.New("usage")

// reportedError is an error the command has already logged: main exits 1
// without printing it again.
type reportedError struct{ error }

func (e reportedError) Unwrap() error { return e.error }

// fatal logs err, which ends the command, and returns it as reported: a
// fatal error is said once, in the log's format (serve's stderr is the
// host's log of it).
func fatal(logger *slog.Logger, msg string, err error) error {
	logger.Error(msg, "error", err)
	return reportedError{err}
}

// exitCode is the process status for what run returned: 2 for a usage
// error, the status of an exitError, 1 for any other error.
func exitCode(err error) int {
	var exit exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return int(exit)
	case errors.Is(err, errUsage):
		return 2
	}
	return 1
}

// fatalMessage is what main prints for err: nothing when it was printed
// or logged already.
func fatalMessage(err error) string {
	var (
		exit     exitError
		reported reportedError
	)
	if err == nil || errors.As(err, &exit) || errors.Is(err, errUsage) || errors.As(err, &reported) {
		return ""
	}
	return err.Error()
}

// command is one subcommand: what it does once its flags and arguments are
// parsed. A command with flags has a flags(*flagSet) method too.
type command interface {
	run(ctx context.Context, env *environment) error
}

// environment is what every command works with.
type environment struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	screen         *liveline.Screen // stderr, shared with the live progress line
	global         *globalFlags
	args           []string // the command's positional arguments
	dash           int      // how many of args came before "--"; -1 when there was none
}

// run parses args and runs the chosen subcommand. It is main without the
// process: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	scr := &liveline.Screen{W: stderr}
	env := &environment{stdin: stdin, stdout: stdout, stderr: scr, screen: scr, global: &globalFlags{}}
	root := newRootCommand(env)
	root.SetArgs(defaultToServe(root, args))
	cmd, err := root.ExecuteContextC(ctx)
	var (
		failed commandError
		usage  usageError
	)
	if errors.As(err, &failed) {
		var reported reportedError
		if !errors.As(err, &usage) || errors.As(err, &reported) {
			return failed.error // a usage error logged already exits 2 all the same
		}
	}
	if err != nil {
		msg := err.Error()
		if msg[len(msg)-1] != '\n' {
			msg += "\n"
		}
		fmt.Fprintf(stderr, "mcptrunk: %sRun '%s --help' for usage.\n", msg, cmd.CommandPath())
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return nil
}

// commandError is an error a command's run returned, as opposed to one of
// parsing the command line.
type commandError struct{ error }

func (e commandError) Unwrap() error { return e.error }

// usageError is a mistake in the command line that a command's run finds
// (a required flag left out, flags that do not go together, arguments
// that are not what the command takes): run prints it as it prints the
// parser's, with where to find help, and the status is 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Is makes a usage error errUsage, for the status.
func (e usageError) Is(target error) bool { return target == errUsage }

// usagef makes a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }
