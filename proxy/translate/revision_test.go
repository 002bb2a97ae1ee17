package translate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
)

func TestReadRequestMeta(t *testing.T) {
	m, err := ReadRequestMeta("tools/list", json.RawMessage(`{"cursor":"x"}`))
	if err != nil || m.Version != "" {
		t.Errorf("a 2025 request: %+v, %v", m, err)
	}
	m, err = ReadRequestMeta("tools/call", json.RawMessage(`{"name":"x","_meta":{"progressToken":1,`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug",`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{}}}}`))
	if err != nil || m.Version != protocol.Stateless || m.LogLevel != "debug" || string(m.Caps["elicitation"]) != `{"form":{}}` || m.Caps["roots"] == nil {
		t.Errorf("a stateless request: %+v, %v", m, err)
	}
	_, err = ReadRequestMeta("server/discover", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}`))
	e := jsonrpc.AsError(err)
	if e == nil || e.Code != protocol.CodeUnsupportedVersion || !strings.Contains(e.Message, "server/discover") {
		t.Fatalf("an unknown revision: %v, want -32022 naming the method", err)
	}
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || data.Requested != "2099-01-01" || strings.Join(data.Supported, ",") != strings.Join(protocol.Supported, ",") {
		t.Errorf("-32022 data %s", e.Data)
	}
	if _, err := ReadRequestMeta("tools/list", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)); jsonrpc.AsError(err).Code != jsonrpc.CodeInvalidParams ||
		!strings.Contains(err.Error(), "clientCapabilities") {
		t.Errorf("a stateless request without clientCapabilities: %v, want -32602 naming them", err)
	}
	if _, err := ReadRequestMeta("tools/list", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}`)); jsonrpc.AsError(err).Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a version that is not a string: %v, want -32602", err)
	}
}

func TestStatelessResult(t *testing.T) {
	for _, tc := range []struct{ method, in, want string }{
		{"tools/call", `{"content":[]}`, `{"content":[],"resultType":"complete"}`},
		{"tools/call", `{"resultType":"input_required","inputRequests":{}}`, `{"resultType":"input_required","inputRequests":{}}`},
		{"tools/call", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"own":1}}`, `{"content":[],"_meta":{"own":1},"resultType":"complete"}`},
		{"completion/complete", ``, `{"resultType":"complete"}`},
		{"tools/list", `{"tools":[],"ttlMs":60000,"cacheScope":"public"}`, `{"tools":[],"ttlMs":0,"cacheScope":"private","resultType":"complete"}`},
		{"resources/templates/list", `{"resourceTemplates":[]}`, `{"resourceTemplates":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
		{"resources/read", `{"contents":[],"ttlMs":5}`, `{"contents":[],"ttlMs":5,"resultType":"complete","cacheScope":"private"}`},
		{"resources/read", `{"contents":[]}`, `{"contents":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
	} {
		got, err := StatelessResult(tc.method, json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %s:\n got %s, %v\nwant %s", tc.method, tc.in, got, err, tc.want)
		}
	}
	if _, err := StatelessResult("tools/call", json.RawMessage(`[1]`)); err == nil || !strings.Contains(err.Error(), "tools/call") {
		t.Errorf("a result that is not an object: %v", err)
	}
}

func TestResult2025(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[{"type":"text","text":"\"ttlMs\""}]}`:                                                          `{"content":[{"type":"text","text":"\"ttlMs\""}]}`,
		`{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"public"}`:                                      `{"tools":[]}`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"own":1}}`:                       `{"content":[],"_meta":{"own":1}}`,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"resultType":"complete"}`:                               `{}`,
		`"not an object, \"resultType\""`:                                                                           `"not an object, \"resultType\""`,
		`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"},"io.modelcontextprotocol/serverInfo":{}}}`: `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`,
	} {
		if got := Result2025(json.RawMessage(in)); string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestRemovedError(t *testing.T) {
	if RemovedError("tools/call") != nil {
		t.Error("tools/call is not removed")
	}
	for _, m := range []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		e := jsonrpc.AsError(RemovedError(m))
		if e == nil || e.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(e.Message, m) || !strings.Contains(e.Message, "removed in 2026-07-28") {
			t.Errorf("%s: %v", m, e)
		}
	}
}
