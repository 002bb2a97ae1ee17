package proxy

import (
	"context"

	"github.com/mcptrunk/mcptrunk/proxy/translate"
)

// hostRequest is a host's request as the trunk handles it: the facts of
// its revision and capabilities, and the session it came on (nil for the
// trunk's own requests), which is where what an upstream asks during it
// goes.
type hostRequest struct {
	translate.HostRequest
	session *Session
}

type hostRequestKey struct{}

// withHostRequest attaches the host request's facts to ctx: Trunk.Handle
// takes them there, so that its signature stays that of a request. By
// pointer, read only: a 2025-era host's requests share legacyHost's, unboxed.
func withHostRequest(ctx context.Context, hr *hostRequest) context.Context {
	return context.WithValue(ctx, hostRequestKey{}, hr)
}

// hostRequestOf returns the facts attached by withHostRequest; a context
// without them (the trunk's own calls, the CLI's one-shot commands) is a
// legacy request with no capabilities.
func hostRequestOf(ctx context.Context) hostRequest {
	if hr, _ := ctx.Value(hostRequestKey{}).(*hostRequest); hr != nil {
		return *hr
	}
	return hostRequest{}
}
