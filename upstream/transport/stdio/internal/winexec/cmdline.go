package winexec

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ArgError is why QuoteForCmd refused an argument. It names the argument by
// its index in args and the character class at fault, never the value: an
// argument may carry a secret expanded from the environment.
type ArgError struct {
	Index  int // into args; -1 for the batch file's own path
	Reason string
}

func (e *ArgError) Error() string {
	if e.Index < 0 {
		return "the batch file's path cannot be run through cmd.exe safely: it " + e.Reason
	}
	return fmt.Sprintf("args[%d] cannot be passed to a batch file safely: it %s", e.Index, e.Reason)
}

// QuoteForCmd returns the command line that runs the batch file program with
// args through cmd.exe, for syscall.SysProcAttr.CmdLine (with cmd.exe as
// the program started):
//
//	cmd.exe /d /v:off /s /c ""C:\path\npx.cmd" -y "--port=9000""
//
// A batch file's arguments are read twice over: cmd.exe parses the command
// line (expanding %VAR%, treating & | < > ( ) ^ as syntax outside double
// quotes), and the batch file's %* hands the same text on to the program it
// starts (node.exe for npx.cmd), which splits it as CommandLineToArgvW and
// the C runtime do. Quoting for the program alone, as os/exec does, lets an
// argument such as `a" & calc & "` end cmd.exe's quotes and run a command.
// So every argument that is not plainly safe is wrapped in double quotes,
// inside which cmd.exe takes those characters literally; a double quote in
// it is doubled (cmd.exe sees its quotes stay balanced; the C runtime reads
// "" inside quotes as one "), and backslashes are doubled where they precede
// a quote, as CommandLineToArgvW needs.
//
// What no quoting makes safe is refused with an *ArgError:
//
//   - % anywhere: cmd.exe expands %NAME% even inside double quotes.
//   - !: a batch file that enables delayed expansion expands !NAME! in its
//     %* even inside quotes (/v:off covers only cmd.exe's own parse).
//   - line breaks, NUL and other control characters (tab excepted): cmd.exe
//     ends the command at a line break, and the others have no faithful
//     passage through it.
//
// The switches: /d skips the AutoRun commands of the registry, /v:off turns
// delayed expansion off whatever the registry says, and /s makes /c strip
// exactly the outer pair of quotes instead of guessing.
//
// The rules hold for batch files that pass %* (or %1...) on unquoted, as
// the shims of npm, pnpm and yarn do; a batch file that wraps %* in quotes
// of its own reverses them, and no caller can help that.
func QuoteForCmd(program string, args []string) (string, error) {
	if reason := refused(program); reason != "" {
		return "", &ArgError{Index: -1, Reason: reason}
	}
	if program == "" || strings.ContainsRune(program, '"') || strings.HasSuffix(program, `\`) {
		// No Windows file name contains a quote or ends in a backslash.
		return "", &ArgError{Index: -1, Reason: "is not a file name"}
	}
	var b strings.Builder
	b.WriteString(`cmd.exe /d /v:off /s /c ""`)
	b.WriteString(program)
	b.WriteByte('"')
	for i, a := range args {
		if reason := refused(a); reason != "" {
			return "", &ArgError{Index: i, Reason: reason}
		}
		b.WriteByte(' ')
		appendArg(&b, a)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// refused says why s cannot pass through cmd.exe, or "" when it can.
func refused(s string) string {
	if !utf8.ValidString(s) {
		// Invalid UTF-8 would reach the child as U+FFFD, not as written.
		return "is not valid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == '%':
			return "contains %, which cmd.exe expands as a variable"
		case r == '!':
			return "contains !, which a batch file with delayed expansion expands as a variable"
		case r == '\r' || r == '\n':
			return "contains a line break, which ends cmd.exe's command"
		case r == 0:
			return "contains NUL"
		case r < 0x20 && r != '\t', r == 0x7f:
			return "contains a control character"
		}
	}
	return ""
}

// safe are the characters an argument may hold and still go unquoted: none
// is special to cmd.exe or to CommandLineToArgvW (\ only when it is not
// last, and the argument is quoted when it is).
func safe(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.ContainsRune(`#$*+-./:?@\_`, c)
}

// appendArg writes a, quoted when it holds anything but safe characters, is
// empty (an empty argument would vanish), or ends in a backslash (which
// would otherwise escape a quote the batch file puts after %1).
func appendArg(b *strings.Builder, a string) {
	quote := a == "" || strings.HasSuffix(a, `\`)
	for _, r := range a {
		if !safe(r) {
			quote = true
			break
		}
	}
	if !quote {
		b.WriteString(a)
		return
	}
	b.WriteByte('"')
	backslashes := 0
	for _, r := range a {
		switch r {
		case '\\':
			backslashes++
		case '"':
			// 2n backslashes before a quote stand for n; then "" is a
			// literal quote inside quotes, and keeps cmd.exe's count even.
			b.WriteString(strings.Repeat(`\`, backslashes))
			b.WriteByte('"')
			backslashes = 0
		default:
			backslashes = 0
		}
		b.WriteRune(r)
	}
	b.WriteString(strings.Repeat(`\`, backslashes)) // doubled before the closing quote
	b.WriteByte('"')
}
