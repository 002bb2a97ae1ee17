package upstream

// Log keys used by this package, in one place so records stay consistent.
const (
	LogServer = "server"
	LogError  = "error"
)
