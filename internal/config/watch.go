package config

import (
	"context"
	"os"
	"time"
)

// Watch calls onChange with the config at path, freshly loaded (or
// the error loading it), each time the file's size or modification time
// changes, and each time reload receives. It polls every interval: no
// file-notification machinery, and it works the same on every platform and
// for editors that replace the file instead of writing it. It returns when
// ctx ends.
func Watch(ctx context.Context, path string, interval time.Duration, reload <-chan struct{}, onChange func(*Config, error)) {
	last := fileStamp(path)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-reload:
			last = fileStamp(path)
		case <-ticker.C:
			now := fileStamp(path)
			if now == last {
				continue
			}
			last = now
		}
		onChange(Load(path))
	}
}

// stamp identifies a version of a file cheaply.
type stamp struct {
	size    int64
	modTime time.Time
	exists  bool
}

func fileStamp(path string) stamp {
	info, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{size: info.Size(), modTime: info.ModTime(), exists: true}
}
