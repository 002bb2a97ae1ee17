package proxy

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
	"github.com/mcptrunk/mcptrunk/proxy/codemode"
)

// blobText is the text of a blob of n bytes: digits, so that a page out of
// place shows.
func blobText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// blobServer has blob, whose result is a text of the bytes asked for,
// and shaped, whose result has a short text and a structuredContent of
// the bytes asked for.
func blobServer() *memserver.Server {
	return &memserver.Server{
		Tools: []json.RawMessage{
			json.RawMessage(`{"name":"blob","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}}}`),
			json.RawMessage(`{"name":"shaped","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}},"outputSchema":{"type":"object","properties":{"data":{"type":"string"}}}}`),
		},
		Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != "tools/call" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
			}
			var a struct{ Bytes int }
			_ = json.Unmarshal(mustField(params, "arguments"), &a)
			if name, _ := rawjson.StringField(params, "name"); name == "shaped" {
				sc, _ := json.Marshal(map[string]string{"data": blobText(a.Bytes)})
				return json.RawMessage(`{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":` + string(sc) + `}`), nil
			}
			return memserver.Text(blobText(a.Bytes)), nil
		},
	}
}

// cutResult is a tool result as the host gets it.
type cutResult struct {
	Content []struct {
		Type, Text, URI string
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

// readText reads uri as h, returning the text of its first content, or
// the error object.
func readText(h *memHost, uri string) (string, json.RawMessage) {
	res, errObj := h.call("resources/read", `{"uri":`+quote(uri)+`}`)
	var r struct {
		Contents []struct{ URI, Text string } `json:"contents"`
	}
	if json.Unmarshal(res, &r) != nil || len(r.Contents) == 0 {
		return "", errObj
	}
	return r.Contents[0].Text, nil
}

// TestResultsCutAndPagedInMemory: with maxResultBytes 16384 on blob, a
// 200,000-byte result reaches the host as its first 16,384 bytes, a note
// naming the link, its pages and the trunk's read_resource tool, and a
// resource_link; reading the link gives back the 200,000 bytes, and its
// pages, at most 16,384 bytes each, add up to them; a page past the last
// is refused naming the count. A result within the budget, and a tool of
// another server, pass untouched.
func TestResultsCutAndPagedInMemory(t *testing.T) {
	_, h := memTrunk(t, memserver.Set{"notes": blobServer(), "other": blobServer()},
		map[string]map[string]any{"notes": {"overrides": map[string]any{"tools": map[string]any{"blob": map[string]any{"maxResultBytes": 16384}}}}},
		map[string]any{"resourceTools": true}, nil)
	h.initialize(`{}`)
	whole := blobText(200_000)

	res, errObj := h.call("tools/call", `{"name":"mcp__notes__blob","arguments":{"bytes":200000}}`)
	var r cutResult
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 3 {
		t.Fatalf("the cut result: %.600s %s", res, errObj)
	}
	shown, note, link := r.Content[0], r.Content[1], r.Content[2]
	if shown.Type != "text" || len(shown.Text) != 16384 || !strings.HasPrefix(whole, shown.Text) {
		t.Errorf("the shown text: %d bytes, a prefix: %v", len(shown.Text), strings.HasPrefix(whole, shown.Text))
	}
	if link.Type != "resource_link" || !strings.HasPrefix(link.URI, "mcptrunk://trunk/results/") {
		t.Fatalf("the link: %+v", link)
	}
	for _, want := range []string{"200000 bytes", "16384", link.URI + "?page=1", "?page=13", "mcp__trunk__read_resource"} {
		if !strings.Contains(note.Text, want) {
			t.Errorf("the note does not say %q: %s", want, note.Text)
		}
	}
	if got, errObj := readText(h, link.URI); got != whole {
		t.Errorf("reading the link: %d bytes, want the whole 200000 (%s)", len(got), errObj)
	}
	var paged strings.Builder
	for page := 1; page <= 13; page++ {
		got, errObj := readText(h, link.URI+"?page="+strconv.Itoa(page))
		if len(got) == 0 || len(got) > 16384 {
			t.Fatalf("page %d: %d bytes (%s)", page, len(got), errObj)
		}
		paged.WriteString(got)
	}
	if paged.String() != whole {
		t.Errorf("the pages add up to %d bytes that are not the whole", paged.Len())
	}
	for _, c := range []struct{ query, want string }{{"?page=14", "has 13 pages"}, {"?page=0", "want ?page=N"}} {
		if _, errObj := readText(h, link.URI+c.query); !strings.Contains(string(errObj), c.want) {
			t.Errorf("%s: %s, want an error saying %q", c.query, errObj, c.want)
		}
	}
	// Through the trunk's own tool, as a model without resources reads.
	text, _ := callText(h, "mcp__trunk__read_resource", `{"uri":`+quote(link.URI+"?page=2")+`}`)
	if text != whole[16384:2*16384] {
		t.Errorf("read_resource of page 2: %.80q", text)
	}

	for _, c := range []struct {
		name  string
		bytes int
	}{{"mcp__notes__blob", 16000}, {"mcp__other__blob", 200_000}} {
		res, _ := h.call("tools/call", `{"name":"`+c.name+`","arguments":{"bytes":`+strconv.Itoa(c.bytes)+`}}`)
		if string(res) != string(memserver.Text(blobText(c.bytes))) {
			t.Errorf("%s of %d bytes: %.200s, want the server's result untouched", c.name, c.bytes, res)
		}
	}
}

// TestResultsStructuredInMemory: structuredContent is never cut: kept
// whole when it fits the budget (the text then gets what is left), else
// left out with the note saying so, and read back after the text. The
// tool has an output schema, so the result without its structuredContent
// is marked isError (hosts on the TypeScript SDK refuse it otherwise),
// the note saying the call succeeded.
func TestResultsStructuredInMemory(t *testing.T) {
	_, h := memTrunk(t, memserver.Set{"notes": blobServer()}, map[string]map[string]any{"notes": {"maxResultBytes": 2048}}, nil, nil)
	h.initialize(`{}`)

	res, _ := h.call("tools/call", `{"name":"mcp__notes__shaped","arguments":{"bytes":1000}}`)
	if !strings.Contains(string(res), `"structuredContent":{"data":"`+blobText(1000)+`"}`) || strings.Contains(string(res), "isError") {
		t.Errorf("a structuredContent within the budget: %.300s", res)
	}

	res, _ = h.call("tools/call", `{"name":"mcp__notes__shaped","arguments":{"bytes":5000}}`)
	var r cutResult
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 3 || r.Structured != nil {
		t.Fatalf("a structuredContent over the budget: %.600s", res)
	}
	if r.Content[0].Text != "see structuredContent" || !strings.Contains(r.Content[1].Text, "structuredContent (5011 bytes) is left out") ||
		!strings.Contains(r.Content[1].Text, "The call succeeded; it is marked as an error only because the tool's output schema") || !r.IsError {
		t.Errorf("the text, the note, isError: %q, %q, %v", r.Content[0].Text, r.Content[1].Text, r.IsError)
	}
	var pages strings.Builder
	for page := 1; ; page++ {
		got, _ := readText(h, r.Content[2].URI+"?page="+strconv.Itoa(page))
		if got == "" {
			break
		}
		pages.WriteString(got)
	}
	if want := `see structuredContent` + "\n" + `{"data":"` + blobText(5000) + `"}`; pages.String() != strings.ReplaceAll(want, "\\n", "\n") {
		t.Errorf("the pages read %.120q..., want the text, then the structuredContent", pages.String())
	}
}

// TestResultsKeptForTheCallerInMemory: a kept result is its caller's
// alone. Another session of the same trunk reading the link gets the
// answer a link never given gets, and so does a stateless caller;
// stateless requests of one subject, each a session of its own, read
// what another of them kept, and another subject's cannot. A result too
// large to keep is cut all the same, its note saying so.
func TestResultsKeptForTheCallerInMemory(t *testing.T) {
	tr, host := memTrunk(t, memserver.Set{"notes": blobServer()}, map[string]map[string]any{"notes": {"maxResultBytes": 4096}}, nil, nil)
	host.initialize(`{}`)
	tr.Share()
	other := &memHost{pipeHost: attachPipes(t, tr, &SessionOptions{ID: "other"})}
	other.initialize(`{}`)
	stateless := func(subject string) *memHost {
		return &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
			return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{PerRequest: true, Subject: subject}).Run(ctx)
		})}
	}
	linkOf := func(h *memHost, meta string) string {
		t.Helper()
		res, errObj := h.call("tools/call", `{"name":"mcp__notes__blob","arguments":{"bytes":10000}`+meta+`}`)
		var r cutResult
		if json.Unmarshal(res, &r) != nil || len(r.Content) != 3 {
			t.Fatalf("the cut result: %.300s %s", res, errObj)
		}
		return r.Content[2].URI
	}
	link := linkOf(host, "")
	if got, errObj := readText(host, link); got != blobText(10000) {
		t.Fatalf("the caller reading its own link: %d bytes %s", len(got), errObj)
	}
	if r := tr.statusReport(tr.state.Load()); r.KeptResults != 1 || r.KeptResultBytes != 10000 {
		t.Errorf("status: %d results kept in %d bytes, want 1 in 10000", r.KeptResults, r.KeptResultBytes)
	}
	never := "mcptrunk://trunk/results/00000000000000000000000000000000"
	_, neverErr := readText(host, never)
	if neverErr == nil {
		t.Fatal("a link never given was read")
	}
	sameAsNever := func(who string, errObj json.RawMessage, uri string) {
		t.Helper()
		if errObj == nil || strings.ReplaceAll(string(errObj), uri, never) != string(neverErr) {
			t.Errorf("%s reading another's link: %s, want the answer to a link never given: %s", who, errObj, neverErr)
		}
	}
	for _, uri := range []string{link, link + "?page=1"} {
		_, errObj := readText(other, uri)
		sameAsNever("another session", errObj, uri)
		_, errObj = stateless("ada").call("resources/read", `{"uri":`+quote(uri)+`,`+statelessMeta(`{}`)+`}`)
		sameAsNever("a stateless caller", errObj, uri)
	}

	adaLink := linkOf(stateless("ada"), ","+statelessMeta(`{}`))
	if got, errObj := stateless("ada").call("resources/read", `{"uri":`+quote(adaLink)+`,`+statelessMeta(`{}`)+`}`); got == nil {
		t.Errorf("ada's next request reading ada's link: %s", errObj)
	}
	_, errObj := stateless("bob").call("resources/read", `{"uri":`+quote(adaLink)+`,`+statelessMeta(`{}`)+`}`)
	sameAsNever("bob", errObj, adaLink)
	_, errObj = readText(host, adaLink)
	sameAsNever("the stdio host", errObj, adaLink)

	// A session's wholes go when it ends.
	gone := &memHost{pipeHost: runPipes(t, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return tr.Attach(jsonrpc.NewLineReader(in), jsonrpc.NewLineWriter(out), &SessionOptions{ID: "gone"}).Run(ctx)
	})}
	gone.initialize(`{}`)
	linkOf(gone, "")
	_, before := tr.kept.Bytes()
	_ = gone.in.Close()
	if err := <-gone.served; err != nil {
		t.Errorf("the session ending: %v", err)
	}
	if _, after := tr.kept.Bytes(); after != before-1 {
		t.Errorf("results kept: %d with the session, %d after it ended; want one fewer", before, after)
	}

	// A whole larger than one caller may keep is cut, and not kept.
	res, _ := host.call("tools/call", `{"name":"mcp__notes__blob","arguments":{"bytes":`+strconv.Itoa(17<<20)+`}}`)
	var r cutResult
	if json.Unmarshal(res, &r) != nil || len(r.Content) != 2 || len(r.Content[0].Text) != 4096 || !strings.Contains(r.Content[1].Text, "The rest is not kept") {
		t.Errorf("a result too large to keep: %.600s", res)
	}
}

// TestKeptResultsBound: the memory kept results may take counts only when
// some server or tool has a budget.
func TestKeptResultsBound(t *testing.T) {
	for _, c := range []struct {
		spec map[string]any
		want int64
	}{
		{nil, 0},
		{map[string]any{"maxResultBytes": 4096}, 64 << 20},
		{map[string]any{"overrides": map[string]any{"tools": map[string]any{"blob": map[string]any{"maxResultBytes": 4096}}}}, 64 << 20},
	} {
		tr := New(memConfig(t, memserver.Set{"notes": blobServer()}, map[string]map[string]any{"notes": c.spec}, nil), nil)
		if got := tr.KeptResultsBound(); got != c.want {
			t.Errorf("%v: %d, want %d", c.spec, got, c.want)
		}
	}
}

// TestResultsWholeInCodeModeInMemory: a code-mode program's call gets the
// whole result, past the tool's budget: none of it reaches the model but
// what the run returns.
func TestResultsWholeInCodeModeInMemory(t *testing.T) {
	_, h := memTrunk(t, memserver.Set{"notes": blobServer()}, map[string]map[string]any{"notes": {"maxResultBytes": 4096}},
		map[string]any{"codeMode": map[string]any{"enabled": true}}, &Options{RunProgram: codemode.Local})
	h.initialize(`{}`)
	text, errObj := callText(h, "mcp__trunk__run_code", `{"code":"const r = await call(\"mcp__notes__blob\", {bytes: 10000}); return [r.content.length, r.content[0].text.length];"}`)
	if !strings.Contains(text, "[1,10000]") {
		t.Errorf("the program saw %q %s, want the whole: one item of 10000 bytes", text, errObj)
	}
}
