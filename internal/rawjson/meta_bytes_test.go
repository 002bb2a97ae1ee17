package rawjson

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestReplaceReservedMetaBytes pins ReplaceReservedMeta's output, byte for
// byte, on shapes of obj and _meta that take its different paths (one scan
// found _meta and it is spliced, a repeated _meta replaced everywhere, an
// absent one added, an emptied one removed, an escaped key sent to the
// slow path), with the trunk's own keys to set and with none (a result
// stripped). The expectations are what the function wrote before it
// scanned obj once: a change that moves a byte fails here.
func TestReplaceReservedMetaBytes(t *testing.T) {
	set := map[string]json.RawMessage{
		"io.modelcontextprotocol/protocolVersion":    json.RawMessage(`"2026-07-28"`),
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(` {"sampling":{}} `),
		"io.modelcontextprotocol/clientInfo":         json.RawMessage(`{"name":"mcptrunk","version":"1"}`),
	}
	for _, c := range []struct {
		in       string
		withSet  bool
		out, err string
	}{
		{"{\"name\":\"t\",\"arguments\":{\"q\":\"x\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"progressToken\":7}}", true, "{\"name\":\"t\",\"arguments\":{\"q\":\"x\"},\"_meta\":{\"progressToken\":7,\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"{\"name\":\"t\",\"arguments\":{\"q\":\"x\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"progressToken\":7}}", false, "{\"name\":\"t\",\"arguments\":{\"q\":\"x\"},\"_meta\":{\"progressToken\":7}}", "<nil>"},
		{"{\"name\":\"t\"}", true, "{\"name\":\"t\",\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"{\"name\":\"t\"}", false, "{\"name\":\"t\"}", "<nil>"},
		{" { \"_meta\" : { \"progressToken\" : \"a\" , \"x\" : [1, 2] } , \"b\" : 1 } ", true, " { \"_meta\" : {\"progressToken\" : \"a\",\"x\" : [1, 2],\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"} , \"b\" : 1 } ", "<nil>"},
		{" { \"_meta\" : { \"progressToken\" : \"a\" , \"x\" : [1, 2] } , \"b\" : 1 } ", false, " { \"_meta\" : { \"progressToken\" : \"a\" , \"x\" : [1, 2] } , \"b\" : 1 } ", "<nil>"},
		{"{\"_meta\":{\"io.modelcontextprotocol/a\":1},\"_meta\":{\"io.modelcontextprotocol/b\":2,\"keep\":true}}", true, "{\"_meta\":{\"keep\":true,\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"},\"_meta\":{\"keep\":true,\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"{\"_meta\":{\"io.modelcontextprotocol/a\":1},\"_meta\":{\"io.modelcontextprotocol/b\":2,\"keep\":true}}", false, "{\"_meta\":{\"keep\":true},\"_meta\":{\"keep\":true}}", "<nil>"},
		{"{\"_meta\":null,\"n\":1}", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"},\"n\":1}", "<nil>"},
		{"{\"_meta\":null,\"n\":1}", false, "{\"_meta\":null,\"n\":1}", "<nil>"},
		{"{\"_meta\":{}}", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"{\"_meta\":{}}", false, "{\"_meta\":{}}", "<nil>"},
		{"{}", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"{}", false, "{}", "<nil>"},
		{"{\"_meta\":{\"io.modelcontextprotocol/only\":1}}", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"{\"_meta\":{\"io.modelcontextprotocol/only\":1}}", false, "{}", "<nil>"},
		{"{\"_meta\":{\"k\\u0020\":\"v\",\"io.modelcontextprotocol/x\":1},\"z\":2}", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"k \":\"v\"},\"z\":2}", "<nil>"},
		{"{\"_meta\":{\"k\\u0020\":\"v\",\"io.modelcontextprotocol/x\":1},\"z\":2}", false, "{\"_meta\":{\"k \":\"v\"},\"z\":2}", "<nil>"},
		{"{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"_meta\":{\"io.modelcontextprotocol/related-task\":{\"taskId\":\"1\"}},\"isError\":false}", true, "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"},\"isError\":false}", "<nil>"},
		{"{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"_meta\":{\"io.modelcontextprotocol/related-task\":{\"taskId\":\"1\"}},\"isError\":false}", false, "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"isError\":false}", "<nil>"},
		{"null", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"null", false, "null", "<nil>"},
		{"", true, "{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptrunk\",\"version\":\"1\"},\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", "<nil>"},
		{"", false, "", "<nil>"},
		{"{\"_meta\":[1]}", true, "", "_meta: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
		{"{\"_meta\":[1]}", false, "", "_meta: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
	} {
		s := set
		if !c.withSet {
			s = nil
		}
		out, err := ReplaceReservedMeta(json.RawMessage(c.in), s)
		if string(out) != c.out || fmt.Sprint(err) != c.err {
			t.Errorf("ReplaceReservedMeta(%s, set %v) = %s, %v; want %s, %s", c.in, c.withSet, out, err, c.out, c.err)
		}
	}
}
