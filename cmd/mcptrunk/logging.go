package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
