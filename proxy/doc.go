// Package proxy is the trunk: the one MCP server every host's session talks
// to, in front of the servers it aggregates.
//
// It attaches hosts' sessions (Trunk.Serve, Trunk.Attach), routes each
// request to the server that owns its name in the catalog of the trunk's
// current generation (route.go), forwards what servers send to the sessions
// they concern (forward.go, hosts.go), and runs the lifecycle: starting the
// servers, announcing list changes, reloading the config, waking sleeping
// servers and watching the lockfile. It decides when a catalog is built
// (package catalog builds it), and reaches servers only through
// upstream.Fleet and the per-key fleets of package instances.
package proxy
