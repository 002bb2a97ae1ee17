// Package usercreds is where a server's per-user credentials come from
// (a server's "credentials" in the config): RFC 8693 token exchange of the
// caller's access token for one whose audience is the server
// (exchange.go), each subject's secrets from a file or the config
// (static.go), and, per subject, the tokens got so far, kept in memory
// only and exchanged again before they expire (broker.go).
//
// The caller's own token (issued for the trunk) is only ever sent to the
// issuer's token endpoint, never to a server; no token or secret is
// logged or quoted in an error, only server names, subjects and the
// issuer's error codes. The proxy decides which instance serves whom
// (proxy/instances); this package only says what each one carries.
package usercreds
