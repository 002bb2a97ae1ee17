package main

import (
	"time"

	"github.com/mcptrunk/mcptrunk/cmd/mcptrunk-bench/refhop"
)

// hopRoundTrip is the p50 round trip of an echo call's line through a
// process that only echoes it (refhop.EchoRoundTrips): the least one more
// process on the path costs. The trunk adds one such round trip to every
// call.
func hopRoundTrip(n int, gap time.Duration) (time.Duration, error) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + smallText + `"}}}` + "\n")
	lat, err := refhop.EchoRoundTrips(n, gap, msg)
	return percentile(lat, 50), err
}
