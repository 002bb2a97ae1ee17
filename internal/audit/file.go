package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// rotator is the log file, rotated by size: when a line would take it past
// maxBytes, file.(keep-1) becomes file.keep, ..., file becomes file.1, and
// a new file is started. Each step is a rename, so a reader sees every
// line in exactly one file. Only the writer goroutine (and Close, after
// it) uses a rotator.
type rotator struct {
	path     string
	maxBytes int64
	keep     int
	f        *os.File
	size     int64
}

// open opens the file for appending, creating it (0600: lines may carry
// arguments) and its directory (0700) when missing.
func (r *rotator) open() error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("%s is not a regular file", r.path)
	}
	r.f, r.size = f, st.Size()
	return nil
}

// write appends one line, rotating first when it would not fit. A line
// bigger than maxBytes gets a file of its own rather than being lost. A
// file that could not be opened before is tried again.
func (r *rotator) write(line []byte) error {
	if r.f == nil {
		if err := r.open(); err != nil {
			return err
		}
	}
	if r.size > 0 && r.size+int64(len(line)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return err
		}
	}
	n, err := r.f.Write(line)
	r.size += int64(n)
	return err
}

// rotate shifts the old files up by one, the oldest falling off the end,
// and starts a new file.
func (r *rotator) rotate() error {
	err := r.f.Close()
	r.f = nil
	for i := r.keep - 1; i >= 1; i-- {
		if e := os.Rename(r.old(i), r.old(i+1)); e != nil && !errors.Is(e, os.ErrNotExist) {
			err = errors.Join(err, e)
		}
	}
	if e := os.Rename(r.path, r.old(1)); e != nil && !errors.Is(e, os.ErrNotExist) {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	return r.open()
}

func (r *rotator) old(i int) string { return fmt.Sprintf("%s.%d", r.path, i) }

func (r *rotator) close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
