package naming

import (
	"fmt"
	"strings"
)

// ServerID validates a configured server name and returns the identifier
// used in exported names and URIs.
//
// The id must split back out of "mcp__<id>__<item>" unambiguously, which
// requires that it contains no "__" and does not end in '_' (otherwise an
// item starting with '_' would move the boundary). A name that already
// contains "__" is rejected outright rather than silently rewritten, since
// the user clearly typed it. Other characters outside [A-Za-z0-9_-] are
// replaced with '_' ("brave search" -> "brave_search"), but if that
// replacement creates "__" or a trailing '_' the name is rejected too.
// "trunk" in any letter case is reserved for the proxy's own tools.
// Every error message names the offending server.
func ServerID(name string) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("server %q: name may not be empty", name)
	case strings.Contains(name, Separator):
		return "", fmt.Errorf("server %q: name may not contain %q", name, Separator)
	case strings.EqualFold(name, TrunkServer):
		return "", fmt.Errorf("server %q: name %q is reserved for the proxy's own tools", name, TrunkServer)
	}
	id := Sanitize(name)
	if err := checkID(id); err != nil {
		return "", fmt.Errorf("server %q: sanitized id %q %v, so exported names would not split back unambiguously", name, id, err)
	}
	return id, nil
}

// checkID reports why id cannot serve as the server part of an exported
// name, or nil if it can. It does not apply the "trunk" reservation, so the
// proxy itself can use TrunkServer.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("is empty")
	case !isLegal(id):
		return fmt.Errorf("contains characters outside [A-Za-z0-9_-]")
	case strings.Contains(id, Separator):
		return fmt.Errorf("contains %q", Separator)
	case strings.HasSuffix(id, "_"):
		return fmt.Errorf("ends with '_'")
	}
	return nil
}
