// Package oauth is mcptrunk's OAuth 2.1 client for remote servers (MCP
// authorization, 2025-06-18 and 2025-11-25). Its surface is small: a Source
// puts the stored token on a connection's requests and answers its 401s,
// Authorize runs the flow (for "mcptrunk auth" and for a trunk's background
// flow), and the store functions find, check and forget what is stored. It
// knows nothing of the Fleet or Client.
//
// A remote server ("http" or "sse") without an Authorization
// header in its config uses the tokens stored for its URL (store.go):
//
//   - Every HTTP request carries "Authorization: Bearer <access token>" when
//     a token is stored; one that expires within a fifth of its lifetime
//     (at most 30 s) is refreshed first.
//   - A 401 to a request that carried a token is answered by refreshing it
//     (or adopting one another connection or process stored meanwhile) and
//     sending the request once more.
//   - A 401 that cannot be fixed that way (no token, no refresh token, the
//     refresh refused, a fresh token refused) makes the server need
//     authorisation: the connection ends with an AuthRequiredError, which
//     the Client reports like any failure ("server "x": initialize: needs
//     authorisation: run "mcptrunk auth x""), and the refused tokens are
//     dropped from the store. A 401 with no Bearer challenge and no token
//     stored is not OAuth's: the transport reports the status as before.
//   - The error carries the server's challenge: a long-running trunk (one
//     that restarts servers: serve) then runs Authorize itself in the
//     background (upstream's oauth_background.go); one-shot commands report
//     the error and leave it to "mcptrunk auth".
//
// The flow (discovery, registration, PKCE, the loopback redirect, the
// token exchange) is in flow.go and discovery.go. Tokens, codes
// and verifiers are never logged nor put in an error.
package oauth
