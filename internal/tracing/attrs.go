package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// The attributes are the OpenTelemetry semantic conventions' for MCP
// (semconv v1.41.0, the last Go package that has them): mcp.method.name,
// mcp.protocol.version, mcp.resource.uri, gen_ai.tool.name,
// gen_ai.prompt.name, gen_ai.operation.name (execute_tool for a tool call),
// jsonrpc.request.id, mcp.session.id (a session of the HTTP downstream;
// the stdio host has none), rpc.response.status_code, error.type,
// network.transport. The
// conventions have no name for which upstream a request is for, so that
// one is the trunk's own.

// attrServer names the upstream server a request is for (its config
// name).
const attrServer = attribute.Key("mcptrunk.server")

// attrCodeRun is the id of the code-mode run whose program made a call.
const attrCodeRun = attribute.Key("mcptrunk.code.run")

// spanName is "{mcp.method.name} {target}", the target being the tool or
// prompt name, as the conventions ask; a resource URI is not (too many
// distinct names).
func spanName(method, name string) string {
	if name == "" {
		return method
	}
	return method + " " + name
}

// requestAttrs are the attributes of a request's span for what it names.
// name is the tool, prompt or resource the request is for, "" when none.
func requestAttrs(method, name, revision string) (target string, attrs []attribute.KeyValue) {
	attrs = append(attrs, semconv.McpMethodNameKey.String(method))
	if revision != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(revision))
	}
	if name == "" {
		return "", attrs
	}
	switch method {
	case "tools/call":
		return name, append(attrs, semconv.GenAIToolName(name), semconv.GenAIOperationNameExecuteTool)
	case "prompts/get":
		return name, append(attrs, semconv.GenAIPromptName(name))
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return "", append(attrs, semconv.McpResourceURI(name))
	}
	return "", attrs
}

// paramsName is the name or URI a request's params carry.
func paramsName(method string, params json.RawMessage) string {
	key := "name"
	switch method {
	case "tools/call", "prompts/get":
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		key = "uri"
	default:
		return ""
	}
	s, _ := rawjson.StringField(params, key)
	return s
}

// requestID is jsonrpc.request.id for a request's id as the host wrote
// it: a string's value, a number's digits; "" for none or null, which the
// conventions say not to record.
func requestID(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	switch {
	case len(id) == 0 || bytes.Equal(id, []byte("null")):
		return ""
	case id[0] == '"':
		var s string
		if json.Unmarshal(id, &s) != nil {
			return ""
		}
		return s
	}
	return string(id)
}

// notAnError are the JSON-RPC codes a server answers a request it cannot
// serve with, which the conventions do not count as the server's failure:
// parse error, invalid request, method not found, invalid params (an
// unknown tool too), resource not found.
var notAnError = map[int]bool{-32700: true, -32600: true, -32601: true, -32602: true, -32002: true}

// endSpan records how a request ended and ends span. server says which
// side span is: a server span does not count a caller's mistake (see
// notAnError) as an error, a client span counts every error code.
func endSpan(span trace.Span, method string, result json.RawMessage, err error, server bool) {
	defer span.End()
	if err == nil {
		if method == "tools/call" && isToolError(result) {
			span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
			span.SetStatus(codes.Error, "tool_error")
		}
		return
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		code := strconv.Itoa(rpcErr.Code)
		span.SetAttributes(semconv.RPCResponseStatusCode(code))
		if server && notAnError[rpcErr.Code] {
			return
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(code))
		span.SetStatus(codes.Error, rpcErr.Message)
		return
	}
	kind := "_OTHER"
	switch {
	case errors.Is(err, context.Canceled):
		kind = "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		kind = "timeout"
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(kind))
	span.SetStatus(codes.Error, kind)
}

// isToolError says whether a tools/call result has isError: true.
func isToolError(result json.RawMessage) bool {
	start, end, found, err := rawjson.FieldSpan(result, "isError")
	return err == nil && found && bytes.Equal(bytes.TrimSpace(result[start:end]), []byte("true"))
}
