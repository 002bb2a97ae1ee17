package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/naming"
)

// urisSame reports whether a and b are the very same bytes in memory, which
// is how results without URIs must come back: not copied, not re-encoded.
func urisSame(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// urisCase is one rewrite: in, the result as the server sent it; want, the
// result the host must get (empty: exactly in, as the same slice).
type urisCase struct {
	name string
	in   string
	want string
}

func urisRun(t *testing.T, fn func(string, json.RawMessage) json.RawMessage, tests []urisCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := json.RawMessage(tt.in)
			got := fn("files", in)
			if string(in) != tt.in {
				t.Fatalf("the input was modified: %s", in)
			}
			if tt.want == "" {
				if string(got) != tt.in {
					t.Fatalf("got  %s\nwant it unchanged: %s", got, tt.in)
				}
				if !urisSame(got, in) {
					t.Errorf("an unchanged result was copied instead of returned as is")
				}
				return
			}
			if string(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
			if json.Valid(in) && !json.Valid(got) {
				t.Errorf("valid input gave invalid output: %s", got)
			}
		})
	}
}

func TestNamespaceToolResult(t *testing.T) {
	urisRun(t, NamespaceToolResult, []urisCase{
		{
			name: "text only, no uri",
			in:   `{"content":[{"type":"text","text":"hello"}],"isError":false}`,
		},
		{
			name: "empty result",
			in:   `{}`,
		},
		{
			name: "no content at all",
			in:   `{"structuredContent":{"a":1}}`,
		},
		{
			name: "uri mentioned only inside text",
			in:   `{"content":[{"type":"text","text":"the \"uri\" field"}]}`,
		},
		{
			name: "text, image and audio blocks pass byte for byte",
			in: `{"content":[{"type":"text","text":"a","annotations":{"audience":["user"]}},` +
				`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","_meta":{"uri":"keep"}},` +
				`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}],"_meta":{"uri":"keep"}}`,
		},
		{
			name: "resource_link: only uri changes",
			in: `{"content":[{"type":"resource_link","uri":"file:///a.txt","name":"a.txt","title":"A",` +
				`"description":"d","mimeType":"text/plain","size":12,` +
				`"icons":[{"src":"https://x/i.png","mimeType":"image/png","sizes":["48x48"]}],` +
				`"annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},` +
				`"_meta":{"uri":"file:///meta","k":[1,2]},"futureField":{"uri":"x"}}],"isError":false}`,
			want: `{"content":[{"type":"resource_link","uri":"mcptrunk://files/file:///a.txt","name":"a.txt","title":"A",` +
				`"description":"d","mimeType":"text/plain","size":12,` +
				`"icons":[{"src":"https://x/i.png","mimeType":"image/png","sizes":["48x48"]}],` +
				`"annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},` +
				`"_meta":{"uri":"file:///meta","k":[1,2]},"futureField":{"uri":"x"}}],"isError":false}`,
		},
		{
			name: "resource_link with uri last and other keys first",
			in:   `{"isError":true,"content":[{"name":"n","type":"resource_link","uri":"demo://r/1"}]}`,
			want: `{"isError":true,"content":[{"name":"n","type":"resource_link","uri":"mcptrunk://files/demo://r/1"}]}`,
		},
		{
			name: "embedded text resource: resource.uri rewritten, text untouched",
			in: `{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain",` +
				`"text":"the \"uri\": \"file:///b\" \u00e9","_meta":{"uri":"m"}},"annotations":{"priority":1},"_meta":{"uri":"m"}}]}`,
			want: `{"content":[{"type":"resource","resource":{"uri":"mcptrunk://files/file:///b","mimeType":"text/plain",` +
				`"text":"the \"uri\": \"file:///b\" \u00e9","_meta":{"uri":"m"}},"annotations":{"priority":1},"_meta":{"uri":"m"}}]}`,
		},
		{
			name: "embedded blob resource: blob untouched",
			in:   `{"content":[{"type":"resource","resource":{"blob":"AAECAwQ=","uri":"s3://bucket/k","mimeType":"application/octet-stream"}}]}`,
			want: `{"content":[{"type":"resource","resource":{"blob":"AAECAwQ=","uri":"mcptrunk://files/s3://bucket/k","mimeType":"application/octet-stream"}}]}`,
		},
		{
			name: "a mix: only the link and the embedded resource change",
			in: `{"content":[{"type":"text","text":"see"},{"type":"resource_link","uri":"a://1","name":"1"},` +
				`{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource","resource":{"uri":"a://2","text":"t"}}]}`,
			want: `{"content":[{"type":"text","text":"see"},{"type":"resource_link","uri":"mcptrunk://files/a://1","name":"1"},` +
				`{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource","resource":{"uri":"mcptrunk://files/a://2","text":"t"}}]}`,
		},
		{
			name: "pretty-printed result keeps its whitespace",
			in:   "{\n  \"content\": [\n    {\n      \"type\": \"resource_link\",\n      \"uri\": \"a://1\"\n    },\n    {\"type\": \"text\", \"text\": \"x\"}\n  ]\n}\n",
			want: "{\n  \"content\": [\n    {\n      \"type\": \"resource_link\",\n      \"uri\": \"mcptrunk://files/a://1\"\n    },\n    {\"type\": \"text\", \"text\": \"x\"}\n  ]\n}\n",
		},
		{
			name: "structuredContent uri is not rewritten",
			in:   `{"content":[{"type":"text","text":"{\"uri\":\"file:///z\"}"}],"structuredContent":{"uri":"file:///z","items":[{"type":"resource_link","uri":"file:///y"}]}}`,
		},
		{
			name: "structuredContent uri is not rewritten, pretty-printed content",
			in:   "{\"content\": [ {\"type\":\"text\",\"text\":\"x\"} ,\n {\"type\":\"image\",\"data\":\"AA==\"} ],\"structuredContent\":{\"uri\":\"file:///z\"}}",
		},
		{
			name: "structuredContent untouched while content is rewritten",
			in:   `{"structuredContent":{"uri":"file:///z","type":"resource_link"},"content":[{"type":"resource_link","uri":"file:///z"}]}`,
			want: `{"structuredContent":{"uri":"file:///z","type":"resource_link"},"content":[{"type":"resource_link","uri":"mcptrunk://files/file:///z"}]}`,
		},
		{
			name: "a top-level uri outside content is not rewritten",
			in:   `{"uri":"file:///top","content":[]}`,
		},
		{
			name: "text block with a stray uri field is not rewritten",
			in:   `{"content":[{"type":"text","text":"x","uri":"file:///t"}]}`,
		},
		{
			name: "block without a type is not rewritten",
			in:   `{"content":[{"uri":"file:///t"}]}`,
		},
		{
			name: "resource_link with an empty uri",
			in:   `{"content":[{"type":"resource_link","uri":""}]}`,
		},
		{
			name: "resource_link with a non-string uri",
			in:   `{"content":[{"type":"resource_link","uri":5}]}`,
		},
		{
			name: "embedded resource that is not an object",
			in:   `{"content":[{"type":"resource","resource":"file:///x","uri":"file:///x"}]}`,
		},
		{
			name: "embedded resource without a resource field",
			in:   `{"content":[{"type":"resource","uri":"file:///x"}]}`,
		},
		{
			name: "non-object blocks are kept, objects around them rewritten",
			in:   `{"content":[1,"uri",null,[{"uri":"x"}],{"type":"resource_link","uri":"a://b"},true]}`,
			want: `{"content":[1,"uri",null,[{"uri":"x"}],{"type":"resource_link","uri":"mcptrunk://files/a://b"},true]}`,
		},
		{
			name: "the uri key written with escapes",
			in:   `{"content":[{"type":"resource_link","\u0075ri":"a://b"}]}`,
			want: `{"content":[{"type":"resource_link","\u0075ri":"mcptrunk://files/a://b"}]}`,
		},
		{
			name: "type written with escapes",
			in:   `{"content":[{"type":"resource\u005flink","uri":"a://b"}]}`,
			want: `{"content":[{"type":"resource\u005flink","uri":"mcptrunk://files/a://b"}]}`,
		},
		{
			name: "unicode and escapes in the uri",
			in:   `{"content":[{"type":"resource_link","uri":"file:///d\u00e9j\u00e0 vu/\"q\".txt"}]}`,
			want: `{"content":[{"type":"resource_link","uri":"mcptrunk://files/file:///déjà vu/\"q\".txt"}]}`,
		},
		{
			name: "a uri that is already namespaced is namespaced again",
			in:   `{"content":[{"type":"resource_link","uri":"mcptrunk://other/x://y"}]}`,
			want: `{"content":[{"type":"resource_link","uri":"mcptrunk://files/mcptrunk://other/x://y"}]}`,
		},
		// Malformed results go to the host as they came.
		{name: "content is null", in: `{"content":null,"structuredContent":{"uri":"a"}}`},
		{name: "content is a string", in: `{"content":"uri","x":1}`},
		{name: "content is an object", in: `{"content":{"type":"resource_link","uri":"a://b"}}`},
		{name: "empty content with whitespace", in: `{"content":[ ],"structuredContent":{"uri":"a"}}`},
		{name: "truncated result", in: `{"content":[{"type":"resource_link","uri":"a://b"}]`},
		{name: "trailing garbage", in: `{"content":[{"type":"resource_link","uri":"a://b"}]}x`},
		{name: "not an object", in: `[{"type":"resource_link","uri":"a://b"}]`},
		{name: "not JSON", in: `uri "uri" uri`},
		{name: "broken block", in: `{"content":[{"type":"resource_link","uri":"a://b"},{"uri":}]}`},
		{name: "nil"},
	})
}

func TestNamespaceToolResultNil(t *testing.T) {
	if got := NamespaceToolResult("files", nil); got != nil {
		t.Errorf("NamespaceToolResult(nil) = %q, want nil", got)
	}
	if got := NamespacePromptResult("files", nil); got != nil {
		t.Errorf("NamespacePromptResult(nil) = %q, want nil", got)
	}
	if got := NamespaceReadResult("files", nil); got != nil {
		t.Errorf("NamespaceReadResult(nil) = %q, want nil", got)
	}
}

func TestNamespacePromptResult(t *testing.T) {
	urisRun(t, NamespacePromptResult, []urisCase{
		{
			name: "text messages only",
			in:   `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`,
		},
		{
			name: "embedded resource and link in messages",
			in: `{"description":"d","messages":[` +
				`{"role":"user","content":{"type":"resource","resource":{"uri":"file:///p","mimeType":"text/plain","text":"t"}}},` +
				`{"role":"assistant","content":{"type":"resource_link","uri":"x://y","name":"y","_meta":{"uri":"m"}}},` +
				`{"role":"user","content":{"type":"text","text":"hi"},"_meta":{"uri":"m"}}],"_meta":{"uri":"m"}}`,
			want: `{"description":"d","messages":[` +
				`{"role":"user","content":{"type":"resource","resource":{"uri":"mcptrunk://files/file:///p","mimeType":"text/plain","text":"t"}}},` +
				`{"role":"assistant","content":{"type":"resource_link","uri":"mcptrunk://files/x://y","name":"y","_meta":{"uri":"m"}}},` +
				`{"role":"user","content":{"type":"text","text":"hi"},"_meta":{"uri":"m"}}],"_meta":{"uri":"m"}}`,
		},
		{
			name: "pretty-printed message keeps its whitespace",
			in:   "{\"messages\": [\n {\"content\": {\"type\": \"resource_link\", \"uri\": \"a://b\"}, \"role\": \"user\"}\n]}",
			want: "{\"messages\": [\n {\"content\": {\"type\": \"resource_link\", \"uri\": \"mcptrunk://files/a://b\"}, \"role\": \"user\"}\n]}",
		},
		{
			name: "a uri directly on a message is not rewritten",
			in:   `{"messages":[{"role":"user","uri":"a://b","content":{"type":"text","text":"x"}}]}`,
		},
		{
			name: "content given as an array is left alone",
			in:   `{"messages":[{"role":"user","content":[{"type":"resource_link","uri":"a://b"}]}]}`,
		},
		{
			name: "message without content",
			in:   `{"messages":[{"role":"user","uri":"a://b"},"x",null]}`,
		},
		{name: "messages is not an array", in: `{"messages":{"content":{"type":"resource_link","uri":"a://b"}}}`},
		{name: "no messages", in: `{"description":"uri","uri":"a://b"}`},
		{name: "not JSON", in: `"uri"`},
	})
}

func TestNamespaceReadResult(t *testing.T) {
	urisRun(t, NamespaceReadResult, []urisCase{
		{
			name: "text and blob contents",
			in: `{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"a \"uri\":\"x\""},` +
				`{"blob":"AAEC","uri":"file:///b","_meta":{"uri":"keep"},"future":[{"uri":"keep"}]}],"_meta":{"uri":"keep"}}`,
			want: `{"contents":[{"uri":"mcptrunk://files/file:///a","mimeType":"text/plain","text":"a \"uri\":\"x\""},` +
				`{"blob":"AAEC","uri":"mcptrunk://files/file:///b","_meta":{"uri":"keep"},"future":[{"uri":"keep"}]}],"_meta":{"uri":"keep"}}`,
		},
		{
			name: "template expansion round trip",
			in:   `{"contents":[{"uri":"demo://r/{id}?q=1","text":""}]}`,
			want: `{"contents":[{"uri":"mcptrunk://files/demo://r/{id}?q=1","text":""}]}`,
		},
		{
			name: "pretty-printed",
			in:   "{\n \"contents\": [\n  {\"uri\": \"a://b\", \"text\": \"t\"},\n  {\"uri\": \"a://c\", \"blob\": \"AA==\"}\n ]\n}",
			want: "{\n \"contents\": [\n  {\"uri\": \"mcptrunk://files/a://b\", \"text\": \"t\"},\n  {\"uri\": \"mcptrunk://files/a://c\", \"blob\": \"AA==\"}\n ]\n}",
		},
		{name: "content without a uri", in: `{"contents":[{"text":"t"},{"uri":"","text":"t"},{"uri":1}]}`},
		{name: "empty contents", in: `{"contents":[]}`},
		{name: "no contents", in: `{"uri":"a://b"}`},
		{name: "contents null", in: `{"contents":null}`},
		{name: "contents not an array", in: `{"contents":{"uri":"a://b"}}`},
		{name: "malformed", in: `{"contents":[{"uri":"a://b"}`},
	})
}

// TestNamespaceContentRoundTrip checks that every rewritten URI splits back
// into the server and the original, which is what reading it back needs.
func TestNamespaceContentRoundTrip(t *testing.T) {
	for _, uri := range []string{"file:///a b", "demo://r/42", "x", "a://b?c=d&e=<f>", "\u65e5\u672c"} {
		enc, _ := json.Marshal(uri)
		res := NamespaceReadResult("srv-1", json.RawMessage(`{"contents":[{"uri":`+string(enc)+`}]}`))
		var got struct {
			Contents []struct{ URI string } `json:"contents"`
		}
		if err := json.Unmarshal(res, &got); err != nil || len(got.Contents) != 1 {
			t.Fatalf("%q: %s: %v", uri, res, err)
		}
		want := "mcptrunk://srv-1/" + uri
		if got.Contents[0].URI != want {
			t.Errorf("%q: got uri %q, want %q", uri, got.Contents[0].URI, want)
		}
		if server, raw, ok := naming.SplitResourceURI(got.Contents[0].URI); !ok || server != "srv-1" || raw != uri {
			t.Errorf("%q: SplitResourceURI(%q) = %q, %q, %v", uri, got.Contents[0].URI, server, raw, ok)
		}
	}
}

// FuzzNamespaceResults checks that rewriting never breaks a valid result,
// never touches an invalid one, and never changes anything but strings.
func FuzzNamespaceResults(f *testing.F) {
	f.Add(`{"content":[{"type":"resource_link","uri":"a://b"}]}`)
	f.Add(`{"content":[{"type":"resource","resource":{"uri":"a://b","blob":"AA=="}}],"structuredContent":{"uri":"x"}}`)
	f.Add(`{"messages":[{"role":"user","content":{"type":"resource_link","\u0075ri":"a"}}]}`)
	f.Add(`{"contents":[ {"uri":"a"} , {"uri":"b","text":"t"} ]}`)
	f.Add(`{"content":null,"uri":"x"}`)
	f.Fuzz(func(t *testing.T, in string) {
		for _, fn := range []func(string, json.RawMessage) json.RawMessage{NamespaceToolResult, NamespacePromptResult, NamespaceReadResult} {
			got := fn("s", json.RawMessage(in))
			if string(got) == in {
				continue
			}
			if !json.Valid([]byte(in)) {
				t.Fatalf("invalid input %q was changed to %q", in, got)
			}
			if !json.Valid(got) {
				t.Fatalf("valid input %q gave invalid %q", in, got)
			}
			if !strings.Contains(string(got), "mcptrunk://s/") {
				t.Fatalf("%q changed to %q without namespacing a URI", in, got)
			}
		}
	})
}
