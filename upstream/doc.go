// Package upstream is the lifecycle of the servers behind the trunk. A
// Fleet is the set of configured servers; a Client is one of them: it dials
// the server through its Transport (the one seam, transport.go), settles
// the revision (revision.go, wire.go), runs discovery, keeps the server's
// catalog current, supervises the connection (health pings, restarts with
// backoff, the background OAuth flow) and reports its status. The
// transports live in upstream/transport/...; they know nothing of Client.
package upstream
