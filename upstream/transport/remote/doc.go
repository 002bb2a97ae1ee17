// Package remote is the transport to servers reached over HTTP: streamable
// HTTP (StartStreamable) and the legacy HTTP+SSE transport (StartSSE). Both
// carry the same jsonrpc.Conn as a stdio server and share one peer (the
// outgoing frame queue and its dispatcher, the pipe of replies into the Conn,
// OAuth on every request, error messages that never quote a URL or a header
// value). They are one package because that peer is their common
// implementation, not an API of its own.
package remote
