package main

//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the 2026-07-28 revision (SEP-2577), but the trunk still carries them for 2025-era hosts and servers, and these tests keep that working.

// A go-sdk host that records everything the trunk sends it (progress, log
// messages, resource updates, list_changed, and the server-to-client
// requests it answered) and answers sampling, elicitation and roots
// deterministically.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hostRec records what the trunk (or a server, for direct sessions) sends
// to a go-sdk host.
type hostRec struct {
	mu          sync.Mutex
	progress    []*mcp.ProgressNotificationParams
	logs        []*mcp.LoggingMessageParams
	updated     []string
	listChanged map[string]int
	received    map[string]int // every method received (requests and notifications)
	sampling    []*mcp.CreateMessageParams
	elicit      []*mcp.ElicitParams
	// elicitComplete: the ids of notifications/elicitation/complete;
	// elicitCancelled: blocking elicitations whose ctx the peer cancelled.
	elicitComplete  []string
	elicitCancelled int
	// toolsChangedAt: when each tools/list_changed arrived.
	toolsChangedAt []time.Time
	// recorded counts the log, progress and resource-update notifications
	// recorded; noted is closed and replaced at each.
	recorded int
	noted    chan struct{}

	// read counts the log, progress and resource-update notifications read
	// from the wire (set by the host's connection, before go-sdk handles
	// them).
	read atomic.Int64
}

func newHostRec() *hostRec {
	return &hostRec{listChanged: map[string]int{}, received: map[string]int{}, noted: make(chan struct{})}
}

// note counts a recorded log, progress or resource-update notification;
// r.mu is held.
func (r *hostRec) note() {
	r.recorded++
	close(r.noted)
	r.noted = make(chan struct{})
}

// settle waits until every log, progress and resource-update notification
// read from the wire so far has been recorded. go-sdk hands notifications to their
// handlers on a goroutine of their own, so those that came before a
// result may still be on their way to the record when the call returns;
// the wire count says exactly how many to wait for. A notification go-sdk
// refuses is never recorded: after 5 s settle gives up, and the test
// compares what it has.
func (r *hostRec) settle(ctx context.Context) {
	want := r.read.Load()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		r.mu.Lock()
		done, noted := int64(r.recorded) >= want, r.noted
		r.mu.Unlock()
		if done {
			return
		}
		select {
		case <-noted:
		case <-ctx.Done():
			return
		}
	}
}

// logsBy counts the log messages that came from logger.
func (r *hostRec) logsBy(logger string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.logs {
		if l.Logger == logger {
			n++
		}
	}
	return n
}

// toolsChangedSince counts the tools/list_changed notifications received
// at or after since.
func (r *hostRec) toolsChangedSince(since time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, at := range r.toolsChangedAt {
		if !at.Before(since) {
			n++
		}
	}
	return n
}

func (r *hostRec) progressFor(token any) []*mcp.ProgressNotificationParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*mcp.ProgressNotificationParams
	for _, p := range r.progress {
		if fmt.Sprint(p.ProgressToken) == fmt.Sprint(token) {
			out = append(out, p)
		}
	}
	return out
}

func (r *hostRec) logsSnapshot() []*mcp.LoggingMessageParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*mcp.LoggingMessageParams(nil), r.logs...)
}

func (r *hostRec) updatedSnapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.updated...)
}

func (r *hostRec) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.received[method]
}

func (r *hostRec) progressCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.progress)
}

// protoRoots are the roots a full host offers in the protocol and
// differential tests.
var protoRoots = []*mcp.Root{{URI: "file:///tmp/mcptrunk-proto-root", Name: "proto-root"}}

// hostConfig chooses what the host declares.
type hostConfig struct {
	// full: sampling and elicitation handlers and roots (go-sdk's default
	// roots capability, with listChanged). Otherwise no capability at all.
	full bool
	// roots the host offers when full.
	roots []*mcp.Root
	// urlElicitation: also declare URL-mode elicitation (full only).
	urlElicitation bool
	// noRoots: full without roots, sampling and elicitation only (what a
	// shared trunk offers the servers behind it).
	noRoots bool
	// sdkDefaults: not full, with go-sdk's default capabilities (roots
	// with listChanged, no roots offered) rather than none.
	sdkDefaults bool
	// maxLine: the longest frame the host reads (0: go-sdk's default,
	// 16 MiB; the fault tests take the chaos server's 20 MB result).
	maxLine int
}

// samplingAnswer is the host's deterministic reply to sampling/createMessage.
func samplingAnswer(p *mcp.CreateMessageParams) *mcp.CreateMessageResult {
	prompt := ""
	if len(p.Messages) > 0 {
		if tc, ok := p.Messages[0].Content.(*mcp.TextContent); ok {
			prompt = tc.Text
		}
	}
	return &mcp.CreateMessageResult{
		Model:      "mcptrunk-test-model",
		Role:       "assistant",
		Content:    &mcp.TextContent{Text: "sampled: " + prompt},
		StopReason: "endTurn",
	}
}

// hostRejects marks a sampling prompt the host refuses, with this error.
const hostRejects = "reject:"

var hostRejection = &jsonrpc.Error{Code: -1, Message: "User rejected sampling request", Data: json.RawMessage(`{"reason":"the test said no"}`)}

// hostBlocks marks an elicitation message the host never answers: it waits
// for the request to be cancelled (or 20s).
const hostBlocks = "block:"

// elicitAnswer accepts a form elicitation with a value for every required
// property (defaults are filled in by the SDK).
func elicitAnswer(p *mcp.ElicitParams) *mcp.ElicitResult {
	if p.Mode == "url" {
		return &mcp.ElicitResult{Action: "decline"}
	}
	content := map[string]any{}
	schema, _ := p.RequestedSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	for _, r := range required {
		name, _ := r.(string)
		prop, _ := props[name].(map[string]any)
		switch prop["type"] {
		case "boolean":
			content[name] = true
		case "integer", "number":
			content[name] = 7
		default:
			content[name] = "Ada"
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// hostOptions returns client options that record into rec.
func hostOptions(rec *hostRec, cfg hostConfig) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			rec.mu.Lock()
			rec.progress = append(rec.progress, req.Params)
			rec.note()
			rec.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			rec.mu.Lock()
			rec.logs = append(rec.logs, req.Params)
			rec.note()
			rec.mu.Unlock()
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			rec.mu.Lock()
			rec.elicitComplete = append(rec.elicitComplete, req.Params.ElicitationID)
			rec.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			rec.mu.Lock()
			rec.updated = append(rec.updated, req.Params.URI)
			rec.note()
			rec.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			rec.mu.Lock()
			rec.listChanged["tools"]++
			rec.toolsChangedAt = append(rec.toolsChangedAt, time.Now())
			rec.mu.Unlock()
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			rec.mu.Lock()
			rec.listChanged["prompts"]++
			rec.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			rec.mu.Lock()
			rec.listChanged["resources"]++
			rec.mu.Unlock()
		},
	}
	if cfg.full {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rec.mu.Lock()
			rec.sampling = append(rec.sampling, req.Params)
			rec.mu.Unlock()
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, hostRejects) {
					return nil, hostRejection
				}
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				// Report progress for the request, as a host may.
				for i := 1; i <= 2; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2})
				}
			}
			return samplingAnswer(req.Params), nil
		}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rec.mu.Lock()
			rec.elicit = append(rec.elicit, req.Params)
			rec.mu.Unlock()
			if strings.HasPrefix(req.Params.Message, hostBlocks) {
				select {
				case <-ctx.Done():
					rec.mu.Lock()
					rec.elicitCancelled++
					rec.mu.Unlock()
					return nil, ctx.Err()
				case <-time.After(20 * time.Second):
					return &mcp.ElicitResult{Action: "cancel"}, nil
				}
			}
			return elicitAnswer(req.Params), nil
		}
		if cfg.urlElicitation {
			opts.Capabilities = &mcp.ClientCapabilities{
				RootsV2:     &mcp.RootCapabilities{ListChanged: true},
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			}
		}
		if cfg.noRoots {
			// No roots; the handlers above add sampling and elicitation.
			opts.Capabilities = &mcp.ClientCapabilities{}
		}
	} else if !cfg.sdkDefaults {
		// An empty struct disables go-sdk's default roots capability too.
		opts.Capabilities = &mcp.ClientCapabilities{}
	}
	return opts
}

// asWireError finds the JSON-RPC error a go-sdk call returned.
func asWireError(err error) *jsonrpc.Error {
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		return w
	}
	return nil
}
