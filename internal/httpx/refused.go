package httpx

import "context"

type refusedKey struct{}

// WithRefused marks ctx as the asking again for a credential after the
// server refused value (a 401): the source of a per-caller credential
// (remote.Endpoint.Authorization) drops that value rather than give it
// again.
func WithRefused(ctx context.Context, value string) context.Context {
	return context.WithValue(ctx, refusedKey{}, value)
}

// Refused is the credential value ctx says the server refused; "" when
// none.
func Refused(ctx context.Context) string {
	v, _ := ctx.Value(refusedKey{}).(string)
	return v
}
