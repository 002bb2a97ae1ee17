// Package pin is mcptrunk's record of the definitions its upstreams export:
// the lockfile (mcptrunk.lock.json), a SHA-256 over a canonical form of each
// tool, prompt, resource and template, the drift between what a server says
// now and what was recorded, and findings that need no model to spot
// (invisible characters, descriptions that name another server's tools,
// unusually long descriptions). A tool's description is read by the model
// as instructions: a definition that changes after the user trusted it must
// never reach the model unseen. The package does no I/O but the lockfile's.
package pin
