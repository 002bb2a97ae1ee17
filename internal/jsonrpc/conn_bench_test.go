package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// The hot path of every request through the trunk: a Call out, the peer's
// read loop and handler, the response back. These benchmarks run two Conns
// back to back over io.Pipe, so they measure the Conn's own work
// (framing, envelope parsing, pending-call bookkeeping, goroutine hand-offs)
// without process or pipe-syscall costs.

// benchParams and benchResult are a tools/call as the trunk forwards it and
// the notes server's answer to it.
var (
	benchParams = json.RawMessage(`{"name":"echo","arguments":{"text":"the quick brown fox jumps over the lazy dog"},"_meta":{"progressToken":42}}`)
	benchResult = json.RawMessage(`{"content":[{"type":"text","text":"the quick brown fox jumps over the lazy dog"}]}`)
)

// benchPair is two Conns over io.Pipe; b answers every request with result.
type benchPair struct {
	a, b     *Conn
	abW, baW *io.PipeWriter
	served   chan error
}

func newBenchPair(tb testing.TB, result json.RawMessage) *benchPair {
	abR, abW := io.Pipe()
	baR, baW := io.Pipe()
	h := handlerFuncs{req: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return result, nil
	}}
	p := &benchPair{abW: abW, baW: baW, served: make(chan error, 2)}
	p.a = NewConn(NewLineReader(baR), NewLineWriter(abW), echo, nil)
	p.b = NewConn(NewLineReader(abR), NewLineWriter(baW), h, nil)
	go func() { p.served <- p.a.Serve() }()
	go func() { p.served <- p.b.Serve() }()
	tb.Cleanup(func() {
		_ = p.abW.Close()
		_ = p.baW.Close()
		for range 2 {
			if err := <-p.served; err != nil {
				tb.Errorf("Serve: %v", err)
			}
		}
	})
	return p
}

// BenchmarkConnCall is one request and its response, one at a time.
func BenchmarkConnCall(b *testing.B) {
	p := newBenchPair(b, benchResult)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.a.Call(ctx, "tools/call", benchParams); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConnCallParallel is many requests in flight on one Conn.
func BenchmarkConnCallParallel(b *testing.B) {
	p := newBenchPair(b, benchResult)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.a.Call(ctx, "tools/call", benchParams); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkConnCall1MB is a call whose result is one 1 MB text content.
func BenchmarkConnCall1MB(b *testing.B) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`)
	p := newBenchPair(b, result)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(result)))
	for b.Loop() {
		if _, err := p.a.Call(ctx, "tools/call", benchParams); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEnvelope is the parsing of one incoming line: a small
// response, a small request, and a response carrying 1 MB.
func BenchmarkDecodeEnvelope(b *testing.B) {
	for _, tc := range []struct {
		name string
		line string
	}{
		{"response", `{"jsonrpc":"2.0","id":17,"result":` + string(benchResult) + "}\n"},
		{"request", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":` + string(benchParams) + "}\n"},
		{"response1MB", `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}` + "\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			line := []byte(tc.line)
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := decodeMessage(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendRequest is the framing of one outgoing request.
func BenchmarkAppendRequest(b *testing.B) {
	id := json.RawMessage("17")
	b.ReportAllocs()
	for b.Loop() {
		buf := appendRequest(getBuf(len(benchParams)), id, "tools/call", benchParams)
		putBuf(buf)
	}
}
