package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// stateWatchEvery is how often serve asks its state store whether it
// answers: how soon status, /readyz and the metric see it go or return.
const stateWatchEvery = 2 * time.Second

// openState opens trunk.state (memory when the config has none), its
// embedded file by default in the user's state directory.
func openState(st config.State, logger *slog.Logger) (*statestore.Store, error) {
	def := ""
	if st.Configured && st.URL == "" && st.Path == "" {
		dir, err := oauth.StateDir()
		if err != nil {
			return nil, fmt.Errorf("trunk.state.path: not set, and %w", err)
		}
		def = filepath.Join(dir, "state.db")
	}
	s, err := statestore.Open(st, def, statestore.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	if st.Configured {
		info := s.Info()
		logger.Info("state store", "kind", info.Kind, "where", info.Where, "sealed", info.Sealed, "keyId", info.KeyID, "onUnavailable", st.OnUnavailable)
		if !info.Sealed {
			logger.Warn("trunk.state has no keyFile: no token is written to the store; callers' sign-ins and exchanged tokens stay in memory")
		}
		for _, f := range looseKeyFiles(st) {
			logger.Warn("a sealing key file is readable by others than its owner: chmod 600 it", "file", f)
		}
	}
	return s, nil
}

// looseKeyFiles are the key files of st that others than their owner may
// read (never on Windows, whose modes say nothing of that).
func looseKeyFiles(st config.State) []string {
	var loose []string
	for _, f := range []string{st.KeyFile, st.PreviousKeyFile} {
		if fi, err := os.Stat(f); f != "" && err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
			loose = append(loose, f)
		}
	}
	return loose
}

// stateDegraded is what /readyz, which answers without a token, says of
// the state store: "" while it answers (or is memory); else its kind and
// since when, never where or why (the status page says).
func stateDegraded(s *statestore.Store) string {
	if s == nil || s.Info().Kind == "memory" {
		return ""
	}
	if st := s.Status(); !st.Up {
		return fmt.Sprintf("state store (%s) unavailable since %s", s.Info().Kind, st.Since.UTC().Format(time.RFC3339))
	}
	return ""
}

// stateReport is how mcptrunk check shows the store: kind, where, key,
// and whether it answers now; usable is false for a configured store that
// cannot be opened or does not answer, which check fails on.
func stateReport(ctx context.Context, st config.State, logger *slog.Logger) (line string, usable bool) {
	if !st.Configured {
		return "state: in memory (trunk.state not set): sign-ins and exchanged tokens do not outlive a restart", true
	}
	s, err := openState(st, logger)
	if err != nil {
		return "state: cannot be opened: " + err.Error(), false
	}
	defer s.Close()
	info := s.Info()
	line = fmt.Sprintf("state: %s %s", info.Kind, info.Where)
	if info.Sealed {
		line += ", tokens sealed under key " + info.KeyID
	} else {
		line += ", no keyFile: tokens stay in memory"
	}
	for _, f := range looseKeyFiles(st) {
		line += ", " + f + " is readable by others than its owner: chmod 600 it"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.Health(ctx); err != nil {
		return line + ", NOT answering: " + err.Error(), false
	}
	return line + ", answering; onUnavailable " + st.OnUnavailable, true
}
