// Command mcptrunk is one MCP server that stands in front of many: it starts
// or connects to every server in its config and re-exports their tools,
// prompts, resources and templates under mcp__<server>__<name> names.
//
// Usage:
//
//	mcptrunk [serve] [--config PATH] [--log-level LEVEL]   the stdio MCP server
//	mcptrunk connect URL [--header "Name: value"]...        one remote server on stdio under its own names (also: bridge)
//	mcptrunk list [--json]                                  the namespaced catalog and each server's status
//	mcptrunk call NAME [JSON]                               route one tool call and print the result
//	mcptrunk check                                          validate the config and connect every server
//	mcptrunk pin [SERVER...] [--yes] [--check]              review the servers' definitions and record them in the lockfile
//	mcptrunk status [--open] [--listen ADDR]                start every server and serve the status page on loopback
//	mcptrunk auth SERVER                                    authorise mcptrunk with a remote server (OAuth)
//	mcptrunk import [--from HOST|FILE] [--write]            show (and with --write add) the servers the hosts have configured
//	mcptrunk install --host HOST [--scope user|project]     move a host's servers into mcptrunk and give the host mcptrunk instead
//	mcptrunk uninstall --host HOST [--scope user|project]   put the host's file back as it was before install
//	mcptrunk version                                        the version, commit and toolchain it was built from
//	mcptrunk completion bash|zsh|fish                       a shell completion script
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	var exit exitError
	switch {
	case errors.As(err, &exit):
		os.Exit(int(exit))
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "mcptrunk:", err)
		os.Exit(1)
	}
}

// exitError ends the program with a status and no further message: the
// command has already said what went wrong.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

var errUsage = errors.New("usage")

// command is one subcommand.
type command interface {
	run(ctx context.Context, env *environment) error
}

// environment is what every command works with.
type environment struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	global         *globalFlags
	args           []string // the command's positional arguments
}

// run parses args and runs the chosen subcommand. It is main without the
// process: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	name := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		name, args = "version", args[1:] // what users try first
	}
	var cmd command
	switch name {
	case "serve":
		cmd = &serveCommand{}
	case "connect", "bridge":
		cmd = &connectCommand{}
	case "list":
		cmd = &listCommand{}
	case "call":
		cmd = &callCommand{}
	case "check":
		cmd = &checkCommand{}
	case "pin":
		cmd = &pinCommand{}
	case "status":
		cmd = &statusCommand{}
	case "auth":
		cmd = &authCommand{}
	case "import":
		cmd = &importCommand{}
	case "install":
		cmd = &installCommand{}
	case "uninstall":
		cmd = &installCommand{undo: true}
	case "version":
		cmd = &versionCommand{}
	case "completion":
		cmd = &completionCommand{}
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "mcptrunk: unknown command %q\n\n%s", name, usage)
		return errUsage
	}
	env := &environment{stdin: stdin, stdout: stdout, stderr: stderr}
	fs, g := newFlagSet(name, stderr)
	if f, ok := cmd.(interface{ flags(*flagSet) }); ok {
		f.flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	rest := fs.Args()
	if _, ok := cmd.(interface{ interspersed() }); ok {
		// Flags may come after positional arguments: parse on after each.
		var positional []string
		for len(rest) > 0 {
			if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
				positional = append(positional, rest...) // everything after "--"
				break
			}
			positional = append(positional, rest[0])
			args = rest[1:]
			if err := fs.Parse(args); err != nil {
				return errUsage
			}
			rest = fs.Args()
		}
		rest = positional
	}
	env.global, env.args = g, rest
	return cmd.run(ctx, env)
}

const usage = `Usage:
  mcptrunk [serve]          run the MCP server on stdin/stdout (for a host such as Claude Desktop);
                            flags: --metrics ADDR (serve Prometheus metrics at http://ADDR/metrics, loopback only)
  mcptrunk connect URL      serve one remote MCP server (streamable HTTP) on stdin/stdout under its own names,
                            for a host that runs only stdio servers (also: bridge); flags: --header "Name: value"
                            (repeatable, ${VAR} from the environment), --sse, --name NAME, --protocol-version VERSION
  mcptrunk list [--json]    connect every server; print the namespaced catalog and each server's status
  mcptrunk call NAME [JSON] route one tool call (arguments as a JSON object) and print the result
  mcptrunk check            validate the config, connect every server, exit non-zero if any failed
  mcptrunk pin [SERVER...]  show how the servers' definitions differ from the lockfile and record them;
                            flags: --yes (record without asking), --check (write nothing; exit 1 on drift)
  mcptrunk status [--open]  start every server and serve the live status page on loopback until interrupted;
                            flags: --open (open it in the browser), --listen 127.0.0.1:0
  mcptrunk auth SERVER      authorise mcptrunk with a remote server that uses OAuth (opens a browser);
                            flags: --timeout 5m, --no-browser, --logout (remove the stored tokens)
  mcptrunk import           show the servers the hosts have configured and what mcptrunk's config would gain;
                            flags: --from HOST|FILE|HOST:FILE (default: every host), --project DIR, --write
                            (add them; the config is backed up first). Hosts: claude-desktop, claude-code,
                            cursor, vscode, windsurf, zed
  mcptrunk install --host HOST    import HOST's servers, then give HOST one server, mcptrunk (its file is backed up);
                            flags: --scope user|project, --project DIR
  mcptrunk uninstall --host HOST  put HOST's file back as it was before install
  mcptrunk version          print the version, the commit it was built from and the Go toolchain (also --version)
  mcptrunk completion SHELL print a completion script for bash, zsh or fish

Flags (every command):
  --config PATH      config file (default: $MCPTRUNK_CONFIG, ./mcptrunk.json, $XDG_CONFIG_HOME/mcptrunk/config.json)
  --log-level LEVEL  debug, info, warn or error (logs go to stderr)
`
