package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/naming"
)

// forwardNotification passes an upstream's notification to the host,
// rewriting what names the upstream: a log message's logger becomes the
// server (or server/logger), an updated resource's URI its namespaced form.
func (t *Trunk) forwardNotification(server, method string, params json.RawMessage) {
	d := t.downstream()
	if d == nil {
		return
	}
	switch method {
	case "notifications/message":
		logger := server
		if inner, _ := rawjson.StringField(params, "logger"); inner != "" {
			logger = server + "/" + inner
		}
		if p, err := rawjson.ReplaceString(params, "logger", logger); err == nil {
			params = p
		}
	case "notifications/resources/updated":
		if uri, _ := rawjson.StringField(params, "uri"); uri != "" {
			if p, err := rawjson.ReplaceString(params, "uri", naming.ResourceURI(server, uri)); err == nil {
				params = p
			}
		}
	}
	if err := d.Notify(method, params); err != nil {
		t.notifyFailed(server, method, err)
	}
}

// notifyFailed logs a notification the host did not get. One over the
// host's message limit is dropped on purpose, and said so at warning level:
// the host would have lost its connection over it.
func (t *Trunk) notifyFailed(server, method string, err error) {
	var tooLarge *jsonrpc.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		t.dropped.Add(1)
		t.logger.Warn("dropped a notification larger than the host reads", "server", server, "method", method,
			"bytes", tooLarge.Size, "limit", tooLarge.Limit, "setting", limitSetting)
		return
	case errors.Is(err, errOutboxFull):
		// A flood while the host is slow: say so now and then, not once
		// per notification.
		if n := t.dropped.Add(1); n == 1 || n%1000 == 0 {
			t.logger.Warn("dropping notifications: the host is not reading them fast enough", "server", server, "method", method, "dropped", n)
		}
		return
	}
	t.logger.Debug("forwarding a notification failed", "server", server, "method", method, "error", err)
}

// forwardRequest passes an upstream's request (sampling, elicitation, roots)
// to the host and its answer back. ctx ends when the upstream cancels.
func (t *Trunk) forwardRequest(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
	d := t.downstream()
	if d == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q: mcptrunk has no host to ask", method)
	}
	if ex := t.parked.current(server); ex != nil {
		// A stateless host's call is in flight on this server: the
		// request goes to the host inside the call's next result.
		return ex.ask(ctx, method, params)
	}
	t.logger.Debug("forwarding a request to the host", "server", server, "method", method)
	if r, ok := d.(progressRouter); ok {
		var release func()
		params, release = r.routeProgress(server, params)
		defer release()
	}
	return d.Call(ctx, method, params)
}

// progressRouter is a Downstream that can carry the host's progress for a
// forwarded request back to the upstream that sent it (the stdio Server).
type progressRouter interface {
	routeProgress(server string, params json.RawMessage) (json.RawMessage, func())
}
