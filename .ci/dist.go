// Command dist builds the release archives of `make dist` into a directory:
// mcptrunk and mcptrunk-code (code mode's runner, which mcptrunk looks for
// beside itself) for every platform hosts run on, built with -trimpath
// and the version stamped, each packed with README.md and LICENSE as a tar.gz, or
// a zip for Windows, where zip is what opens on a double click; and
// SHA256SUMS, in the format `sha256sum -c` checks.
//
// It is Go rather than shell so that it needs no tar, zip or sha256sum
// (macOS has shasum, Windows none of them). Files in the archives carry
// the time in SOURCE_DATE_EPOCH when it is set (the Makefile sets the
// commit's), so that building one commit twice gives the same archives.
//
// Usage: go run .ci/dist.go -version v1.2.3 -out dist
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// platforms are those a host runs on (Claude Desktop, Claude Code, Cursor).
var platforms = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// docs go into every archive beside the binary. Both must be there: the
// LICENSE is what lets anyone use and pass on what they downloaded.
var docs = []string{"README.md", "LICENSE"}

func main() {
	version := flag.String("version", "dev", "the version to stamp and name the archives with")
	out := flag.String("out", "dist", "the directory to write the archives and SHA256SUMS into")
	flag.Parse()
	if err := dist(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func dist(version, out string) error {
	mtime, err := sourceDate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	build, err := os.MkdirTemp("", "mcptrunk-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(build)

	// The builds run at once: each is mostly one link, on one core.
	names := make([]string, len(platforms))
	errs := make([]error, len(platforms))
	var wg sync.WaitGroup
	for i, p := range platforms {
		names[i] = fmt.Sprintf("mcptrunk_%s_%s_%s", version, p.goos, p.goarch)
		wg.Go(func() { errs[i] = buildFor(p.goos, p.goarch, version, filepath.Join(build, names[i])) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var sums strings.Builder
	for i, p := range platforms {
		name := names[i]
		var files []archiveFile
		for _, cmd := range commands {
			exe := exeName(cmd, p.goos)
			files = append(files, archiveFile{name + "/" + exe, filepath.Join(build, name, exe), 0o755})
		}
		for _, d := range docs {
			if _, err := os.Stat(d); err != nil {
				return fmt.Errorf("%s goes into every archive: %w", d, err)
			}
			files = append(files, archiveFile{name + "/" + d, d, 0o644})
		}
		archive := name + ".tar.gz"
		write := writeTarGz
		if p.goos == "windows" {
			archive, write = name+".zip", writeZip
		}
		path := filepath.Join(out, archive)
		if err := writeFile(path, func(w io.Writer) error { return write(w, files, mtime) }); err != nil {
			return err
		}
		sum, err := sha256File(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sum, archive)
		fmt.Fprintln(os.Stderr, "dist:", path)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sums.String()), 0o644)
}

// commands are the binaries in every archive: the trunk, and the runner
// of code mode's programs, which the trunk finds beside itself.
var commands = []string{"mcptrunk", "mcptrunk-code"}

// buildFor builds the commands for one platform into dir.
func buildFor(goos, goarch, version, dir string) error {
	args := []string{"build", "-trimpath", "-buildvcs=auto", "-ldflags=-s -w -X main.buildVersion=" + version, "-o", dir + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, "./cmd/"+c)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building for %s/%s: %w\n%s", goos, goarch, err, out)
	}
	return nil
}

func exeName(cmd, goos string) string {
	if goos == "windows" {
		return cmd + ".exe"
	}
	return cmd
}

// archiveFile is a file on disk and its name and mode in an archive.
type archiveFile struct {
	name, src string
	mode      int64
}

func sourceDate() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

func writeTarGz(w io.Writer, files []archiveFile, mtime time.Time) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []archiveFile, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeFile writes path through fill, leaving no partial file on failure.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func sha256File(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
