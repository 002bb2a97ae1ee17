//go:build windows

package main

// notifyReload: Windows has no SIGHUP; the config file is still watched.
func notifyReload() (<-chan struct{}, func()) { return nil, func() {} }
