package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields n bytes of 'x'.
type repeatReader struct{ n int64 }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(int64(len(p)), r.n)], xs)
	r.n -= int64(k)
	return k, nil
}

var xs = bytes.Repeat([]byte("x"), 64<<10)

// hugeLine is one line of about n bytes: the head and tail of a message
// around n bytes of string.
func hugeLine(head string, n int64, tail string) io.Reader {
	return io.MultiReader(strings.NewReader(head), &repeatReader{n}, strings.NewReader(tail+"\n"))
}

// allocatedDuring reports the bytes the process allocated while f ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A host that sends a 1 GiB line gets -32600 with its id and the next
// request answered, and the Conn never holds the line: what it allocates
// while reading it is a small fraction of it (the line itself would be
// 1 GiB, twice that as bufio's ReadBytes collects it).
func TestOverlongLineFromHostBoundedMemory(t *testing.T) {
	leakCheck(t)
	const size = 1 << 30
	in := io.MultiReader(
		hugeLine(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"text":"`, size, `"}}}`),
		strings.NewReader(`{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n"))
	out := recorder{w: io.Discard}
	c := NewConn(NewLineReader(in), NewLineWriter(&out), pingHandler(), &Options{AnswerInvalid: true})
	c.SetMaxReadBytes(1<<20, "test.limit")
	var serveErr error
	alloc := allocatedDuring(func() { serveErr = c.Serve() })
	if serveErr != nil {
		t.Fatalf("Serve = %v, want nil at EOF", serveErr)
	}
	if alloc > 32<<20 {
		t.Errorf("reading a %d-byte line allocated %d bytes, want it bounded by the read limit", size, alloc)
	}
	got := frames(t, out.bytes())
	if len(got) != 2 || string(got[0].ID) != "7" || got[0].Error == nil || got[0].Error.Code != CodeInvalidRequest ||
		!strings.Contains(got[0].Error.Message, "test.limit") || string(got[1].ID) != "8" || got[1].Error != nil {
		t.Fatalf("the conn wrote %s, want -32600 for id 7 naming the limit, then ping's answer", out.bytes())
	}
}

// A server's answer over the limit fails the call it answers, by the id at
// its start (Go SDKs) or at its end (the TypeScript SDK), and the
// connection goes on: the next call is answered.
func TestOverlongResponseFailsItsCall(t *testing.T) {
	for _, tc := range []struct{ name, head, tail string }{
		{"id first", `{"jsonrpc":"2.0","id":1,"result":{"text":"`, `"}}`},
		{"id last", `{"result":{"text":"`, `"},"jsonrpc":"2.0","id":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			opts, logs := captureLog()
			opts.ResyncBytes = ResyncBytes(64 << 10)
			p := newRawPeer(t, nil, opts)
			p.c.SetMaxReadBytes(64<<10, "test.limit")
			// The read loop takes the limit as it starts a line, and may be
			// waiting on its first one already: an empty line makes it
			// take the limit just set before the test's lines.
			p.send("")
			call := goCall(p.c, testCtx(t), "tools/call", nil)
			p.readRequest("tools/call")
			line, _ := io.ReadAll(hugeLine(tc.head, 1<<20, tc.tail))
			p.send(string(bytes.TrimSuffix(line, []byte("\n"))))
			r := waitCall(t, call)
			var over *OverlongLineError
			if !errors.As(r.err, &over) || over.Unending || over.Limit != 64<<10 || over.Size != int64(len(line)) {
				t.Fatalf("the call got %v, want an *OverlongLineError of %d bytes", r.err, len(line))
			}
			if !strings.Contains(logs.String(), "discarding a message over the size limit") {
				t.Errorf("nothing logged:\n%s", logs)
			}
			call = goCall(p.c, testCtx(t), "ping", nil)
			m := p.readRequest("ping")
			p.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
			if r := waitCall(t, call); r.err != nil {
				t.Fatalf("the next call failed: %v", r.err)
			}
		})
	}
}

// A server that writes without ever ending the line cannot be
// resynchronised: past the resync bound the Conn ends, with an error that
// says so, and its pending calls fail with it; memory stays bounded.
func TestUnendingLineEndsTheConn(t *testing.T) {
	leakCheck(t)
	in, w := io.Pipe()
	out := recorder{w: io.Discard}
	c := NewConn(NewLineReader(in), NewLineWriter(&out), nil, &Options{ResyncBytes: 8 << 20})
	c.SetMaxReadBytes(64<<10, "test.limit")
	served := make(chan error, 1)
	go func() { served <- c.Serve() }()
	call := goCall(c, testCtx(t), "tools/call", nil)
	writer := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, &repeatReader{1 << 40}) // ends when the Conn stops reading
		writer <- err
	}()
	r := waitCall(t, call)
	if !errors.Is(r.err, ErrClosed) || !strings.Contains(r.err.Error(), "cannot be resynchronised") {
		t.Errorf("the pending call got %v, want the connection closed as not resynchronisable", r.err)
	}
	err := waitServe(t, served, "conn")
	var over *OverlongLineError
	if !errors.As(err, &over) || !over.Unending {
		t.Errorf("Serve = %v, want an unending *OverlongLineError", err)
	}
	in.Close()
	<-writer
}

// A request whose method is "", null or missing is answered -32600 with
// its id, on stdio, and PeekEnvelope (HTTP) says the same.
func TestRequestWithoutMethodIsAnswered(t *testing.T) {
	leakCheck(t)
	p := newRawPeer(t, pingHandler(), &Options{AnswerInvalid: true})
	for _, tc := range []struct{ line, id string }{
		{`{"jsonrpc":"2.0","id":11,"method":""}`, "11"},
		{`{"jsonrpc":"2.0","id":"a","method":null}`, `"a"`},
		{`{"jsonrpc":"2.0","id":12,"params":{}}`, "12"},
	} {
		p.send(tc.line)
		p.expectLine(`{"jsonrpc":"2.0","id":` + tc.id + `,"error":{"code":-32600,"message":"invalid request: method must be a non-empty string"}}`)
		env, err := PeekEnvelope([]byte(tc.line))
		var rpcErr *Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidRequest || string(env.ID) != tc.id {
			t.Errorf("PeekEnvelope(%s) = %+v, %v; want -32600 with the id", tc.line, env, err)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":13,"method":"ping"}`)
	p.expectLine(`{"jsonrpc":"2.0","id":13,"result":{}}`)
}

// The ends of an over-long line give its id wherever the SDK put it, and
// never a nested object's.
func TestEdgeEnvelope(t *testing.T) {
	for _, tc := range []struct{ head, tail, id, method string }{
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"x":"xxx`, `xx"}}` + "\n", "5", "tools/call"},
		{`{"result":{"content":[{"type":"text","text":"xxx`, `xxx"}]},"jsonrpc":"2.0","id":"r-1"}` + "\n", `"r-1"`, ""},
		{`{"result":{"xxx`, `xx","id":3}}` + "\n", "", ""},
		{`{"method":"notifications/message","params":{"data":"xx`, `xx"}}`, "", "notifications/message"},
	} {
		info := edgeEnvelope([]byte(tc.head), []byte(tc.tail))
		if string(info.id) != tc.id || info.method != tc.method {
			t.Errorf("edgeEnvelope(%q, %q) = id %q method %q, want %q %q", tc.head, tc.tail, info.id, info.method, tc.id, tc.method)
		}
	}
}
