// Package browser opens a URL in the user's browser with the platform's own
// opener (open, rundll32's URL handler, xdg-open). It does not wait for the
// browser, and the opener's output goes nowhere: stdout may be the
// protocol channel.
package browser

import (
	"os/exec"
	"runtime"
)

// Open asks the platform's opener to show u. An error says only that the
// opener could not be started; whether a browser appeared is unknown.
func Open(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
