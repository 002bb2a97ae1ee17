// Package winexec holds the Windows rules for starting a server's command,
// as pure functions: finding the file a command names through PATH and
// PATHEXT, and building the command line that runs a batch file (npx.cmd)
// through cmd.exe without letting an argument become a command. They take
// everything they need as arguments and touch no file system of their own,
// so their tests run on every platform, though only the Windows build of
// the stdio transport calls them.
package winexec

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultPathExt is what Windows uses when PATHEXT is unset or empty.
var DefaultPathExt = []string{".COM", ".EXE", ".BAT", ".CMD"}

// ErrNotFound is returned (wrapped) by Resolve when no candidate file exists.
var ErrNotFound = errors.New("executable file not found")

// Resolve returns the file that command names, the way cmd.exe finds it,
// except that the current directory is never searched:
//
//   - A command with a path separator (\ or /) or a drive ("C:") is taken as
//     given: when it has an extension, that file; when it has none, the name
//     with each PATHEXT extension in turn.
//   - Otherwise each absolute directory of path is searched in order (empty
//     and relative entries are skipped), and in each directory the name as
//     given when its extension is one of PATHEXT's, then the name with each
//     PATHEXT extension in PATHEXT's order.
//
// Extensions compare without regard to case. An empty pathext means
// DefaultPathExt. exists reports whether a regular file (not a directory)
// is at a path; relative paths are the caller's to interpret (the server's
// working directory). Resolve does no other I/O.
//
// Without this, a config's "command": "npx" fails on Windows: npx is
// npx.cmd there, and CreateProcess neither searches PATHEXT nor runs a
// batch file on its own terms. Using the child's PATH and PATHEXT (not the
// trunk's) keeps a server's env override meaningful.
func Resolve(command string, path, pathext []string, exists func(string) bool) (string, error) {
	if command == "" {
		return "", errors.New("empty command")
	}
	exts := normaliseExts(pathext)
	if hasPathOrDrive(command) {
		if hasExt(command) {
			if exists(command) {
				return command, nil
			}
			return "", ErrNotFound
		}
		for _, e := range exts {
			if f := command + e; exists(f) {
				return f, nil
			}
		}
		return "", ErrNotFound
	}
	asGiven := hasExt(command) && inExts(ext(command), exts)
	for _, dir := range path {
		if !isAbs(dir) {
			// Relative entries (and ".") would make the result depend on the
			// trunk's working directory, the same hazard exec.LookPath
			// reports as ErrDot.
			continue
		}
		base := join(dir, command)
		if asGiven && exists(base) {
			return base, nil
		}
		for _, e := range exts {
			if f := base + e; exists(f) {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("%w in the server's PATH (with PATHEXT)", ErrNotFound)
}

// IsBatch reports whether file is a batch file (.bat or .cmd), which cmd.exe
// must run and whose arguments need QuoteForCmd.
func IsBatch(file string) bool {
	if !hasExt(file) {
		return false
	}
	e := ext(file)
	return strings.EqualFold(e, ".bat") || strings.EqualFold(e, ".cmd")
}

// SplitList splits a PATH value as Windows does: entries separated by ";",
// a double-quoted stretch kept whole (a directory may contain ";") with the
// quotes removed, and empty entries dropped.
func SplitList(path string) []string {
	var (
		out    []string
		b      strings.Builder
		quoted bool
	)
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
		}
		b.Reset()
	}
	for _, r := range path {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ';' && !quoted:
			flush()
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

// SplitPathExt splits a PATHEXT value into its extensions, in order.
func SplitPathExt(pathext string) []string {
	var out []string
	for e := range strings.SplitSeq(pathext, ";") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// Getenv returns the value of key in env, a list of "KEY=value" entries,
// comparing names without regard to case as Windows does. A later entry
// wins, as it does when os/exec builds the child's environment block.
func Getenv(env []string, key string) string {
	var v string
	for _, kv := range env {
		// Windows keeps per-drive directories as "=C:=C:\dir": an empty
		// name before the first "=", never a variable looked up here.
		k, val, ok := strings.Cut(kv, "=")
		if ok && k != "" && strings.EqualFold(k, key) {
			v = val
		}
	}
	return v
}

// normaliseExts drops empty extensions, gives each a leading dot, and falls
// back to DefaultPathExt.
func normaliseExts(pathext []string) []string {
	var out []string
	for _, e := range pathext {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return DefaultPathExt
	}
	return out
}

func inExts(e string, exts []string) bool {
	for _, x := range exts {
		if strings.EqualFold(e, x) {
			return true
		}
	}
	return false
}

// hasPathOrDrive reports whether s names a location rather than a bare
// program name: it has a separator, or a drive ("C:").
func hasPathOrDrive(s string) bool {
	return strings.ContainsAny(s, `\/`) || hasDrive(s)
}

func hasDrive(s string) bool {
	return len(s) >= 2 && s[1] == ':' && isLetter(s[0])
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isAbs reports whether dir is a Windows absolute path: a drive followed by a
// separator, or a UNC path.
func isAbs(dir string) bool {
	if hasDrive(dir) {
		return len(dir) >= 3 && isSep(dir[2])
	}
	return len(dir) >= 2 && isSep(dir[0]) && isSep(dir[1])
}

func isSep(c byte) bool { return c == '\\' || c == '/' }

// hasExt reports whether the last element of s has an extension.
func hasExt(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	return dot >= 0 && dot > strings.LastIndexAny(s, `\/:`)
}

// ext returns the extension of the last element of s, dot included; call
// it only when hasExt(s).
func ext(s string) string { return s[strings.LastIndexByte(s, '.'):] }

func join(dir, name string) string {
	if isSep(dir[len(dir)-1]) {
		return dir + name
	}
	return dir + `\` + name
}
