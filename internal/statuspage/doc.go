// Package statuspage is the trunk's status page: one server-rendered HTML
// page (html/template, embedded, inline CSS, no external assets, so it works
// offline and needs no build step) showing every server behind the trunk
// and the trunk's own counters, kept live by server-sent events at
// /events that carry the re-rendered server section once a second.
//
// It reads the trunk only through a Source function, so the same handler
// serves `mcptrunk status` and the `serve --metrics` listener, and its tests
// need no trunk. Nothing on the page comes from a server's environment or
// headers: only what upstream.Status and the trunk's counters say.
package statuspage
