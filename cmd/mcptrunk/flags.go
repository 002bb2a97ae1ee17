package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy/codemode/child"
)

// flagSet is where a command defines its flags (its flags method).
type flagSet = pflag.FlagSet

// globalFlags are accepted by every command.
type globalFlags struct {
	config   string
	logLevel string
}

func (g *globalFlags) register(fs *flagSet) {
	fs.StringVar(&g.config, "config", "", "the config `FILE` (default: $MCPTRUNK_CONFIG, ./mcptrunk.json, $XDG_CONFIG_HOME/mcptrunk/config.json)")
	fs.StringVar(&g.logLevel, "log-level", "", "the `LEVEL` of the logs on stderr: debug, info, warn or error")
}

// Type names the value of a repeatable flag in help ("--header strings"
// would say less than "--header Name: value", which the usage's backquotes
// give; Type is what pflag shows when they are missing).
func (*headerFlags) Type() string { return "header" }

// Type: see headerFlags.Type.
func (*stringsFlag) Type() string { return "strings" }

// configPath finds the config the flags (or the environment) point at.
// When there is none it says how to make one: by adding a server, or
// from the servers the hosts have, which import shows first (it writes
// nothing when they have none, so it is not told to write).
func (e *environment) configPath() (string, error) {
	path, err := config.Resolve(e.global.config, os.Getenv, fileExists)
	if err != nil {
		return "", fmt.Errorf("%w; to make one, add a server (mcptrunk add NAME -- COMMAND [ARGS...]), or run mcptrunk import to see the servers your hosts have configured and bring them in, or name a config with --config", err)
	}
	return path, nil
}

// loadConfig finds and parses the config.
func (e *environment) loadConfig() (*config.Config, error) {
	path, err := e.configPath()
	if err != nil {
		return nil, err
	}
	return config.Load(path)
}

// logConfigWarnings logs what in the config is probably a mistake (keys
// mcptrunk does not know, code mode on without its runner) and what was
// left out on purpose, once per load.
func logConfigWarnings(logger *slog.Logger, cfg *config.Config) {
	for _, w := range cfg.Warnings {
		logger.Warn("config: " + w)
	}
	if cfg.Trunk.CodeMode.Enabled {
		if _, err := child.Find(); err != nil {
			logger.Warn("config: trunk.codeMode: run_code will fail: " + err.Error())
		}
	}
	for _, n := range cfg.Notes {
		logger.Info("config: " + n)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// logger returns the stderr logger at the flag's level, or at fallback.
func (e *environment) logger(fallback slog.Level) (*slog.Logger, error) {
	level := fallback
	if e.global.logLevel != "" {
		if err := level.UnmarshalText([]byte(e.global.logLevel)); err != nil {
			return nil, usagef("--log-level: %q is not one of debug, info, warn, error", e.global.logLevel)
		}
	}
	return newLogger(e.stderr, level), nil
}
