package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// newLogger logs to w (stderr: stdout carries the protocol) through tint,
// in colour only when w is a terminal.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(tint.NewTextHandler(w, &tint.Options{
		Level:      level,
		TimeFormat: time.TimeOnly,
		NoColor:    !isTerminal(w),
	}))
}

// isTerminal reports whether f is a terminal: stdin for the hint of a bare
// mcptrunk, stderr for colours and the live progress line.
func isTerminal(f any) bool {
	if s, ok := f.(interface{ Terminal() any }); ok {
		f = s.Terminal()
	}
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}
