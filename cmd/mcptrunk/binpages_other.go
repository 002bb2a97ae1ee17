//go:build !linux

package main

// releaseBinaryPages does nothing here: the madvise advice it gives on
// Linux has no counterpart the trunk relies on elsewhere.
func releaseBinaryPages() {}
