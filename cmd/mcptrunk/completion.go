package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/hostcfg"
)

// Shell completion is cobra's: each script asks the binary itself
// (mcptrunk __complete WORDS...) what to offer, so the commands, flags and
// values it offers are those the command line defines, without a list to
// keep in step.

// completionShells are the shells completion writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

const completionLong = `Print the completion script for a shell. Load it for the current shell, or save it where the
shell loads completions from:
  bash:  source <(mcptrunk completion bash)    or save it as ~/.local/share/bash-completion/completions/mcptrunk
  zsh:   source <(mcptrunk completion zsh)     or save it as _mcptrunk in a directory of $fpath
  fish:  mcptrunk completion fish | source     or save it as ~/.config/fish/completions/mcptrunk.fish
The bash script needs the bash-completion package.`

// completionCommand prints the completion script for one shell.
type completionCommand struct{}

func (completionCommand) run(_ context.Context, env *environment) error {
	root := newRootCommand(&environment{global: &globalFlags{}})
	switch env.args[0] { // one of completionShells: the command line checked
	case "bash":
		return root.GenBashCompletionV2(env.stdout, true)
	case "zsh":
		return root.GenZshCompletion(env.stdout)
	}
	return root.GenFishCompletion(env.stdout, true)
}

// flagValueHints say what a flag's value is, for the flags whose values a
// shell can complete. Keyed by flag name: a name means the same in every
// command. A flag with a value and no hint completes nothing (no file
// names for --timeout).
var flagValueHints = map[string]struct {
	file   bool     // a path: the shell completes file names
	values []string // one of these words
}{
	"config":     {file: true},
	"log-level":  {values: []string{"debug", "info", "warn", "error"}},
	"project":    {file: true},
	"token-file": {file: true},
	"tls-cert":   {file: true},
	"tls-key":    {file: true},
	"host":       {values: hostcfg.HostIDs()},
	"from":       {values: hostcfg.HostIDs()},
	"scope":      {values: []string{"user", "project"}},
	"type":       {values: []string{"http", "sse"}},
}

// registerFlagCompletions tells cobra how to complete the values of the
// flags of fs, which cmd defines.
func registerFlagCompletions(cmd *cobra.Command, fs *flagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.NoOptDefVal != "" { // a boolean: no value to complete
			return
		}
		h := flagValueHints[f.Name]
		complete := cobra.NoFileCompletions
		switch {
		case h.file:
			complete = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return nil, cobra.ShellCompDirectiveDefault
			}
		case len(h.values) > 0:
			complete = cobra.FixedCompletions(h.values, cobra.ShellCompDirectiveNoFileComp)
		}
		// Only fails for a flag cmd does not have or one already
		// registered: neither can happen for a command's own flags.
		_ = cmd.RegisterFlagCompletionFunc(f.Name, complete)
	})
}

// completeServers offers the names of the config's servers (with remote,
// only those that use OAuth: what auth takes). The config is the one the
// line's --config names, as the command would read it.
func completeServers(remote bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if remote && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		flag, _ := cmd.Flags().GetString("config")
		path, err := config.Resolve(flag, os.Getenv, fileExists)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := config.Load(path)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, s := range cfg.Servers {
			if remote && !s.UsesOAuth() {
				continue
			}
			names = append(names, s.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
