// Package accesstoken makes the trunk's HTTP listener an OAuth 2.1
// resource server: it checks JWT access tokens (RFC 9068) issued for the
// trunk by the team's authorization server, and describes the trunk to
// clients with protected resource metadata (RFC 9728), so that a host that
// gets 401 can find where to sign in.
//
// Keys come from the issuer's JWKS, found through the issuer's own
// metadata (OpenID Connect discovery, else RFC 8414), never configured by
// hand, so that the authorization server can rotate them: a token signed
// by a key not yet seen makes the set be fetched again, at most once a
// minute so that forged key ids cannot turn the trunk into a flood on the
// issuer. Signatures are checked by go-jose; nothing here is cryptography.
package accesstoken
