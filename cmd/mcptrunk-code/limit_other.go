//go:build !linux && !darwin

package main

// limitMemory does nothing where the process's memory cannot be bounded
// from within (Windows would need a job object; the BSDs are not done): there the collector's
// limit (debug.SetMemoryLimit) is the only bound, which slows a program
// down near it but does not stop it.
func limitMemory(int64) error { return nil }
