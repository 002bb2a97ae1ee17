// Package statestore keeps what the trunk must not lose on a restart and
// what replicas must share (trunk.state): callers' sign-ins to servers in
// credentials mode "oauth", exchanged tokens and, with Redis, the counts
// of trunk.limits.
//
// A Store is keys and values with an expiry, over one of three Backends:
// the embedded one (a bbolt file, one process's), Redis (shared by
// replicas) and memory (the default, which outlives nothing). A value the
// caller asks to seal is written sealed with AES-256-GCM under the key in
// trunk.state.keyFile, with the record's key name and expiry as
// additional data, so that a record can be neither read nor moved to
// another name or lifetime without the key; each sealed record names the
// key's id, so a record sealed under the previous key (previousKeyFile)
// is still read and is sealed again under the current one. Values are
// never logged.
//
// A Store remembers whether its backend answered last (Status), and
// Watch asks it on a period, so that status, /readyz and the metrics can
// say the store is down and when it came back; a Backend that loses its
// server (Redis) reconnects by itself.
package statestore
