package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

type flagSet = flag.FlagSet

// globalFlags are accepted by every command.
type globalFlags struct {
	config   string
	logLevel string
}

func newFlagSet(name string, stderr io.Writer) (*flagSet, *globalFlags) {
	fs := flag.NewFlagSet("mcptrunk "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	g := &globalFlags{}
	fs.StringVar(&g.config, "config", "", "config file")
	fs.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error")
	return fs, g
}

// configPath finds the config the flags (or the environment) point at.
func (e *environment) configPath() (string, error) {
	return config.Resolve(e.global.config, os.Getenv, fileExists)
}

// loadConfig finds and parses the config.
func (e *environment) loadConfig() (*config.Config, error) {
	path, err := e.configPath()
	if err != nil {
		return nil, err
	}
	return config.Load(path)
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
			return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", e.global.logLevel)
		}
	}
	return newLogger(e.stderr, level), nil
}
