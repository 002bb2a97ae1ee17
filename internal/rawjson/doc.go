// Package rawjson edits JSON objects as bytes: it finds a top-level member's
// value, replaces it, or reads a plain string, leaving every other byte as it
// was. Both sides of the trunk use it: the proxy to rewrite names and URIs in
// what passes through, the upstream client to set the per-request _meta of
// the 2026-07-28 revision, without decoding and re-encoding what they carry.
package rawjson
