// Package upstream is the lifecycle of the servers behind the trunk. A Host
// is the set of configured servers; a Client is one of them: it dials the
// server through its transport (the one seam, see transport.go), settles
// the revision (server/discover for 2026-07-28, else the 2025-11-25
// initialize; see revision.go and wire.go) and runs discovery, keeps the
// server's catalog current,
// supervises the connection (health pings, restarts with backoff, the
// background OAuth flow) and reports its status. The transports themselves
// live in upstream/transport/...; they know nothing of Host or Client.
package upstream
