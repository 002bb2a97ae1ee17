package config

import (
	"errors"
	"fmt"
	"strings"
)

// EntryError is why one server's config entry cannot be used: an unset
// variable, a field of the wrong type, a transport without its command or
// URL. The server is then failed from the start, and the rest of the
// config serves: one bad entry never costs the others. Its message names
// the fields and variables, never a value.
type EntryError struct {
	Server   string
	Problems []error // each "field: what is wrong"
}

// Error is the server's failure as its status and a call to it show it,
// beside the server's name.
func (e *EntryError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return "config entry: " + strings.Join(msgs, "; ")
}

// Lines are the problems one a line, each naming the server.
func (e *EntryError) Lines() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = fmt.Errorf("server %q: %w", e.Server, p)
	}
	return out
}

// Unusable joins the problems of every server entry that cannot be used,
// one a line naming the server and field; nil when every entry can.
func (c *Config) Unusable() error {
	var errs []error
	for _, s := range c.Servers {
		if s.Invalid != nil {
			errs = append(errs, s.Invalid.Lines()...)
		}
	}
	return errors.Join(errs...)
}
