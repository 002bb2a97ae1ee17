package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
)

// subcommands is every word run dispatches on, with what completion offers
// for it. The flags are not listed here: completion asks each command for
// them (its flags method), so a flag added to a command is completed
// without a change here. TestCompletionKnowsEveryCommand fails when run's
// switch and this table name different commands.
var subcommands = []struct {
	name, summary string
	new           func() command // nil: run handles the word itself
	args          []string       // the words its positional arguments take, if a fixed set
}{
	{"serve", "run the MCP server on stdin/stdout (the default)", func() command { return &serveCommand{} }, nil},
	{"connect", "serve one remote MCP server on stdin/stdout under its own names", func() command { return &connectCommand{} }, nil},
	{"bridge", "the same as connect", func() command { return &connectCommand{} }, nil},
	{"list", "print every server's status and the namespaced catalog", func() command { return &listCommand{} }, nil},
	{"call", "route one tool call and print the result", func() command { return &callCommand{} }, nil},
	{"check", "validate the config and connect every server", func() command { return &checkCommand{} }, nil},
	{"pin", "compare the servers' definitions with the lockfile and record them", func() command { return &pinCommand{} }, nil},
	{"status", "serve the live status page on loopback", func() command { return &statusCommand{} }, nil},
	{"auth", "authorise mcptrunk with a remote server (OAuth)", func() command { return &authCommand{} }, nil},
	{"import", "show the hosts' servers and add them to mcptrunk's config", func() command { return &importCommand{} }, nil},
	{"install", "move a host's servers into mcptrunk and give the host mcptrunk", func() command { return &installCommand{} }, nil},
	{"uninstall", "give a host its own servers back", func() command { return &installCommand{undo: true} }, nil},
	{"version", "print the version and what it was built from", func() command { return &versionCommand{} }, nil},
	{"completion", "print a shell completion script", func() command { return &completionCommand{} }, completionShells},
	{"help", "print the usage", nil, nil},
}

// flagHints say what a flag's value is, for the flags whose values a shell
// can complete. Keyed by flag name: a name means the same in every command.
var flagHints = map[string]struct {
	file   bool     // a path: complete file names
	values []string // one of these words
}{
	"config":    {file: true},
	"log-level": {values: []string{"debug", "info", "warn", "error"}},
	"project":   {file: true},
	"host":      {values: hostcfg.HostIDs()},
	"from":      {values: hostcfg.HostIDs()},
	"scope":     {values: []string{"user", "project"}},
	"type":      {values: []string{"http", "sse"}},
}

// completionFlag is one flag as a completion script offers it.
type completionFlag struct {
	Name, Usage string
	Value       bool     // takes a value (every flag but a boolean)
	File        bool     // the value is a path
	Values      []string // the value is one of these
}

// completionCmd is one subcommand as a completion script offers it.
type completionCmd struct {
	Name, Summary string
	Flags         []completionFlag
	Args          []string
}

// completionModel is what every script is generated from: the commands in
// dispatch order, each with the flags its flag set really has.
func completionModel() []completionCmd {
	var cmds []completionCmd
	for _, sc := range subcommands {
		c := completionCmd{Name: sc.name, Summary: sc.summary, Args: sc.args}
		if sc.new != nil {
			fs, _ := newFlagSet(sc.name, io.Discard)
			if f, ok := sc.new().(interface{ flags(*flagSet) }); ok {
				f.flags(fs)
			}
			fs.VisitAll(func(fl *flag.Flag) {
				b, isBool := fl.Value.(interface{ IsBoolFlag() bool })
				h := flagHints[fl.Name]
				c.Flags = append(c.Flags, completionFlag{
					Name: fl.Name, Usage: fl.Usage, Value: !isBool || !b.IsBoolFlag(),
					File: h.file, Values: h.values,
				})
			})
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// completionShells are the shells completion writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// completionCommand prints the completion script for one shell.
type completionCommand struct{}

func (completionCommand) run(_ context.Context, env *environment) error {
	if len(env.args) != 1 || !slices.Contains(completionShells, env.args[0]) {
		fmt.Fprint(env.stderr, "usage: mcptrunk completion bash|zsh|fish\n")
		return errUsage
	}
	script, err := completionScript(env.args[0], completionModel())
	if err != nil {
		return err
	}
	_, err = io.WriteString(env.stdout, script)
	return err
}
