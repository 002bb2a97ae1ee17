// Package logkey names the attributes of the trunk's log records in one
// place, so that every package's records read the same, and clips the
// values of untrusted input in them (Clip).
package logkey

const (
	// Server is the id of the upstream a record is about.
	Server = "server"
	// Error is the error a record reports.
	Error = "error"
)
