package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line is github.com/spf13/cobra's, the library Go users know
// from gh, kubectl and docker: each command has its own --help listing
// every flag, flags go anywhere on the line (after positional arguments
// too), an unknown command gets a "did you mean", and shell completion is
// generated from these same definitions.

func init() {
	cobra.EnableCommandSorting = false // the commands in the order of subcommands
}

// subcommand is one command of the command line.
type subcommand struct {
	use     string // the name and its arguments, as help shows them
	aliases []string
	short   string // one line, for the list of commands
	long    string // what --help says above the flags ("" for short)
	example string
	args    argRule
	// new makes the command whose run the command line ends in, and whose
	// flags method (if any) defines its flags.
	new func() command
	// complete offers the values of the positional arguments (nil: none).
	complete cobra.CompletionFunc
}

// subcommands is every command, in the order help lists them.
var subcommands = []subcommand{
	{use: "serve", short: "Serve MCP on stdin/stdout for a host (the default command)", long: serveLong,
		example: "  mcptrunk                                  # the same as mcptrunk serve\n" +
			"  mcptrunk serve --http 127.0.0.1:8931      # streamable HTTP, for many hosts at once",
		args: noArgs(""), new: func() command { return &serveCommand{} }},
	{use: "list", short: "Print each server's status and the namespaced catalog",
		long: "Start every server (a lazy one with a cached catalog is listed from the cache), then print each\n" +
			"server's status and the catalog a host gets: tools, prompts, resources and resource templates.",
		args: noArgs(""), new: func() command { return &listCommand{} }},
	{use: "call NAME [JSON]", short: "Route one tool call and print the result",
		long: "Start the server NAME belongs to (only that one), call the tool NAME (its namespaced name, as list\n" +
			"prints it) with JSON, a JSON " +
			"object of arguments ({} when left out), and print the result. The status is 1 when the call fails or\n" +
			"the tool reports an error.",
		example: `  mcptrunk call mcp__weather__search '{"city":"os"}'`,
		args:    argsBetween(1, 2, "NAME"), new: func() command { return &callCommand{} }},
	{use: "check", short: "Validate the config and connect every server",
		long: "Validate the config and connect every server, printing each one's progress, then a status table.\n" +
			"The status is 1 when the config is invalid or any server failed. A lazy server with a cached\n" +
			"catalog is not started unless --refresh is given.",
		args: noArgs(""), new: func() command { return &checkCommand{} }},
	{use: "pin [SERVER...]", short: "Compare the servers' definitions with the lockfile and record them",
		long: "Connect the servers (all, or those named), show how the definitions of their tools, prompts and\n" +
			"resources differ from the lockfile, and record them once you agree (or with --yes). With --check\n" +
			"nothing is written and the status is 1 when anything differs.",
		args: anyArgs, new: func() command { return &pinCommand{} }, complete: completeServers(false)},
	{use: "status", short: "Serve the live status page on loopback",
		long: "Start every server, as serve does but with no host, and serve the live status page on a loopback\n" +
			"address until interrupted. The page's URL carries a token made for this run.",
		args: noArgs(""), new: func() command { return &statusCommand{} }},
	{use: "auth SERVER", short: "Authorise mcptrunk with a remote server (OAuth)",
		long: "Authorise mcptrunk with SERVER, a remote server of the config that uses OAuth: open the\n" +
			"authorisation page in a browser (or print its URL), wait for the redirect on 127.0.0.1, and store\n" +
			"the tokens where every mcptrunk command and a running trunk find them.",
		args: argsBetween(1, 1, "SERVER"), new: func() command { return &authCommand{} }, complete: completeServers(true)},
	{use: "import", short: "Show the hosts' servers and add them to mcptrunk's config",
		long: "Show the MCP servers the hosts have configured (Claude Desktop, Claude Code, Cursor, VS Code,\n" +
			"Windsurf, Zed, Gemini CLI, Codex) and what mcptrunk's config would gain; with --write add them (the config is backed\n" +
			"up first). A name mcptrunk's config already has keeps its entry.",
		args: noArgs("name a host or file with --from"), new: func() command { return &importCommand{} }},
	{use: "install", short: "Move a host's servers into mcptrunk and give the host mcptrunk",
		long: "Import the host's servers into mcptrunk's config, then give the host one server, mcptrunk.\n" +
			"The host's file is backed up beside it first; uninstall puts it back.",
		example: "  mcptrunk install --host claude-desktop",
		args:    noArgs("name the host with --host"), new: func() command { return &installCommand{} }},
	{use: "uninstall", short: "Give a host its own servers back",
		long:    "Put the host's file back as it was before install.",
		example: "  mcptrunk uninstall --host claude-desktop",
		args:    noArgs("name the host with --host"), new: func() command { return &installCommand{undo: true} }},
	{use: "search QUERY", short: "Find servers in the MCP registry",
		long: "List the servers of the MCP registry (the official one, or --registry) whose name or description\n" +
			"matches QUERY: each one's name, version, how it runs (npm, pypi, oci, nuget packages, or remote\n" +
			"streamable-http and sse) and its status in the registry (active, deprecated, deleted).",
		example: "  mcptrunk search github",
		args:    argsBetween(1, 1, "QUERY"), new: func() command { return &searchCommand{} }},
	{use: "add NAME[@VERSION] | NAME -- COMMAND [ARGS...] | NAME --url URL", short: "Add a server to mcptrunk's config: one you run, a remote one, or one from the MCP registry",
		long: "Add a server to mcptrunk's config, which is backed up first; its other bytes stay as they were.\n\n" +
			"With -- COMMAND [ARGS...], the server NAME runs COMMAND (a path is made absolute; a bare name is\n" +
			"looked up in PATH when the server starts), with the environment variables of --env. With --url,\n" +
			"NAME is a remote server (streamable HTTP) sent the headers of --header.\n\n" +
			"Otherwise NAME is a server of the MCP registry (its latest version, or VERSION), pinned to that\n" +
			"version: an npm package runs with npx, pypi with uvx, oci with docker, nuget with dnx, a remote\n" +
			"server by its URL. What the user must give (environment variables, headers, URL parts) becomes\n" +
			"${VAR} references, listed with whether each is set; values are never written. With trunk.pin the\n" +
			"server's definitions are recorded on first use.",
		example: "  mcptrunk add memory -- npx -y @modelcontextprotocol/server-memory\n" +
			"  mcptrunk add mine --env API_KEY='${API_KEY}' -- ./bin/my-server --verbose\n" +
			"  mcptrunk add docs --url https://docs.example.com/mcp --header 'Authorization: Bearer ${DOCS_TOKEN}'\n" +
			"  mcptrunk add io.github.example/weather --dry-run\n" +
			"  mcptrunk add io.github.example/weather@1.4.2 --name weather",
		args: argRule{min: 1, max: 1, what: "NAME", command: true,
			hint: "to add a server that runs a command: mcptrunk add NAME -- COMMAND [ARGS...]"},
		new: func() command { return &addCommand{} }},
	{use: "remove NAME", aliases: []string{"rm"}, short: "Remove a server from mcptrunk's config",
		long: "Remove the server NAME from mcptrunk's config, which is backed up first; its other bytes stay as\n" +
			"they were. A running trunk drops the server when it reloads the config.",
		example: "  mcptrunk remove notes",
		args:    argsBetween(1, 1, "NAME"), new: func() command { return &removeCommand{} }, complete: completeServers(false)},
	{use: "connect URL", aliases: []string{"bridge"}, short: "Serve one remote MCP server on stdin/stdout under its own names",
		long: "Serve the remote MCP server at URL (streamable HTTP, or legacy HTTP+SSE) on stdin/stdout under its\n" +
			"own names, for a host that runs only stdio servers. The server gets everything the trunk gives any\n" +
			"server: revisions translated, OAuth when no Authorization header is given, restarts, limits.",
		example: `  mcptrunk connect https://mcp.example.com/mcp --header "Authorization: Bearer ${TOKEN}"`,
		args:    argsBetween(1, 1, "URL"), new: func() command { return &connectCommand{} }},
	{use: "version", short: "Print the version and what it was built from",
		long: "Print the version, the commit it was built from (and whether the tree had changes), its date and\n" +
			"the Go toolchain. The first line is \"mcptrunk VERSION\", for scripts.",
		args: noArgs(""), new: func() command { return &versionCommand{} }},
	{use: "completion bash|zsh|fish", short: "Print a shell completion script",
		long:     completionLong,
		example:  "  source <(mcptrunk completion bash)",
		args:     argRule{min: 1, max: 1, what: "the shell: bash, zsh or fish", oneOf: completionShells},
		new:      func() command { return &completionCommand{} },
		complete: cobra.FixedCompletions(completionShells, cobra.ShellCompDirectiveNoFileComp)},
}

const rootLong = `mcptrunk is one MCP server that stands in front of many. A host (Claude Desktop, Claude Code,
Cursor, ...) runs it as a single stdio server, and through it gets every server of mcptrunk's config,
each one's tools, prompts, resources and templates under names of its own: mcp__<server>__<name>.

Run with no command, mcptrunk serves MCP on stdin/stdout (mcptrunk serve): that is what a host runs.
To try it from a terminal: mcptrunk add NAME -- COMMAND [ARGS...] (or mcptrunk import, to see the
servers your hosts have), then mcptrunk list, then mcptrunk call.`

const serveLong = `Serve MCP on stdin/stdout for a host such as Claude Desktop, starting every server of the config.
The config is reloaded when its file changes (or on SIGHUP). With --http, serve streamable HTTP for
many hosts at once instead (and stdin/stdout too with --stdio).`

// newRootCommand builds the command line, every command running with env.
func newRootCommand(env *environment) *cobra.Command {
	root := &cobra.Command{
		Use:               "mcptrunk",
		Short:             "One MCP server in front of many",
		Long:              rootLong,
		Version:           version(),
		SilenceErrors:     true, // run prints them, once
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true}, // ours is in subcommands
		// Reached only with flags and no command that defaultToServe did
		// not send to serve: say what there is.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate("{{.Version}}")
	root.Version = formatVersion(version(), readBuildDetails())
	root.SetIn(env.stdin)
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	env.global.register(root.PersistentFlags())
	registerFlagCompletions(root, root.PersistentFlags())
	for _, sc := range subcommands {
		c := sc.new()
		cmd := &cobra.Command{
			Use: sc.use, Aliases: sc.aliases, Short: sc.short, Long: sc.long, Example: sc.example,
			Args: sc.args.check, ValidArgsFunction: sc.complete,
			RunE: func(cmd *cobra.Command, args []string) error {
				env.args, env.dash = args, cmd.ArgsLenAtDash()
				if err := c.run(cmd.Context(), env); err != nil {
					return commandError{err}
				}
				return nil
			},
		}
		if sc.long == "" {
			cmd.Long = sc.short
		}
		cmd.Flags().SortFlags = false // in the order the command defines them
		if f, ok := c.(interface{ flags(*flagSet) }); ok {
			f.flags(cmd.Flags())
		}
		registerFlagCompletions(cmd, cmd.Flags())
		root.AddCommand(cmd)
	}
	root.InitDefaultHelpCmd()
	return root
}

// defaultToServe makes a command line with no command a serve command
// line: a bare mcptrunk, or one with only flags (mcptrunk --http ADDR), is
// what a host runs. A line with a word that is not a flag's value is left
// to the commands (and to "did you mean" when the word is none of them),
// as is one asking for help or the version.
func defaultToServe(root *cobra.Command, args []string) []string {
	if len(args) > 0 && args[0] == "-version" {
		return append([]string{"--version"}, args[1:]...) // what users try first
	}
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		return args
	}
	lookup := func(name string) *pflag.Flag {
		if f := serve.Flags().Lookup(name); f != nil {
			return f
		}
		return root.PersistentFlags().Lookup(name)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || !strings.HasPrefix(a, "-") || a == "-":
			return args // a positional argument: a command's name, or a mistake
		case slices.Contains([]string{"-h", "--help", "-v", "--version"}, a):
			return args
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			if f := lookup(a[2:]); f != nil && f.NoOptDefVal == "" {
				i++ // the flag's value
			}
		}
	}
	return append([]string{"serve"}, args...)
}

// argRule is what positional arguments a command takes; check is the
// cobra.PositionalArgs that refuses the others, naming them.
type argRule struct {
	min, max int // max < 0: no limit, for the arguments before any "--"
	// command: the arguments after "--" are a command to run, of at least
	// one word, and min and max count only those before it.
	command bool
	what    string   // what the first argument is, for "needs ..."
	hint    string   // said after an argument was refused
	oneOf   []string // the words the arguments may be (nil: any)
}

var anyArgs = argRule{max: -1}

func noArgs(hint string) argRule { return argRule{hint: hint} }

func argsBetween(min, max int, what string) argRule { return argRule{min: min, max: max, what: what} }

func (r argRule) check(cmd *cobra.Command, args []string) error {
	quoted := func(args []string) string {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = fmt.Sprintf("%q", a)
		}
		return strings.Join(q, " ")
	}
	if at := cmd.ArgsLenAtDash(); r.command && at >= 0 {
		if at == len(args) {
			return fmt.Errorf("%s: -- needs the COMMAND to run after it", cmd.Name())
		}
		args = args[:at]
	}
	var msg string
	switch {
	case len(args) < r.min:
		msg = fmt.Sprintf("%s needs %s", cmd.Name(), r.what)
	case r.max == 0 && len(args) > 0:
		msg = fmt.Sprintf("%s takes no arguments (got %s)", cmd.Name(), quoted(args))
	case r.max > 0 && len(args) > r.max:
		msg = fmt.Sprintf("%s takes at most %s (got %s too)", cmd.Name(), plural(r.max, "argument", "arguments"), quoted(args[r.max:]))
	default:
		for _, a := range args {
			if r.oneOf != nil && !slices.Contains(r.oneOf, a) {
				return fmt.Errorf("%s: %q is not one of %s", cmd.Name(), a, strings.Join(r.oneOf, ", "))
			}
		}
		return nil
	}
	if r.hint != "" {
		msg += "; " + r.hint
	}
	return errors.New(msg)
}
